#!/usr/bin/env python3
"""Completion with and without people (issue 44): 1,000 simulated production requests on the demo account,
once as it is and once with `human_fallback`, where this script plays the people: it works the queue through
the admin API (claim, read the call sheet, answer every question with a value of its type, complete) until
every request is terminal. Prints, for both runs, the share of requests ending SUCCESS or PARTIAL with every
required field of their schema in `results`, the states, and the tasks by outcome.

The people here answer everything they are asked, so the second figure is the ceiling a fully staffed queue
reaches; the first is what the automated calls finish alone.

Needs python3.11 or later only (standard library) and a built binary: SWITCHBOARD_BINARY, else target/release/switchboard,
else target/debug/switchboard (CARGO_TARGET_DIR honoured). Usage: scripts/measure-work-queue.py [COUNT]
"""
import json, os, socket, subprocess, sys, tempfile, time, tomllib, urllib.error, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIVE_KEY, LIVE_SECRET = "sk_live_demo_7Qh2m9XcP4", "demo-live-secret-change-me"
ADMIN = "dev-admin-token"
SCHEMAS = ["vob-basic", "claim-status-basic"]


def binary():
    if os.environ.get("SWITCHBOARD_BINARY"):
        return os.environ["SWITCHBOARD_BINARY"]
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    for profile in ("release", "debug"):
        path = os.path.join(target, profile, "switchboard")
        if os.path.exists(path):
            return path
    sys.exit("no switchboard binary: build one or set SWITCHBOARD_BINARY")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, work, fallback):
        config = open(os.path.join(ROOT, "config/default.toml")).read()
        config = config.replace("daily_call_capacity = 200", "daily_call_capacity = 10000000")
        config = config.replace('mode = "system"', 'mode = "manual"\nstart = "2026-11-23T14:00:00Z"')
        config = config.replace("time_scale = 60.0", "time_scale = 1000000.0")
        if fallback:
            config = config.replace('  "script_version",\n]', '  "script_version",\n  "human_fallback",\n]', 1)
            assert "human_fallback" in config, "the demo's feature list moved"
        path = os.path.join(work, "measure.toml")
        open(path, "w").write(config)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, RUST_LOG="error", SWITCHBOARD_BIND=f"127.0.0.1:{self.port}",
                   SWITCHBOARD_DATA_DIR=os.path.join(work, "data"))
        self.process = subprocess.Popen([binary(), "serve", "--config", path], env=env, stdout=subprocess.DEVNULL)
        deadline = time.time() + 120
        while True:
            try:
                urllib.request.urlopen(self.base + "/readyz", timeout=1)
                break
            except Exception:
                if time.time() > deadline:
                    sys.exit("the server did not become ready")
                time.sleep(0.05)
        self.token = self.call("GET", "/v1/auth", headers={"Switchboard-API-Key": LIVE_KEY,
                                                           "Switchboard-API-Secret": LIVE_SECRET})[1]["token"]

    def stop(self):
        self.process.terminate()
        self.process.wait()

    def call(self, method, path, body=None, headers=None, token=None):
        request = urllib.request.Request(self.base + path, method=method, headers=dict(headers or {}))
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        if body is not None:
            request.add_header("Content-Type", "application/json")
            request.data = json.dumps(body).encode()
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")


def letters(i):
    """A name for request `i`: names take letters only."""
    name = "A"
    while True:
        name += "abcdefghijklmnopqrstuvwxyz"[i % 26]
        i //= 26
        if i == 0:
            return name


def item(i):
    inputs = {"payerName": "Aetna", "phoneNumber": "8005550123", "memberId": f"W{100000000 + i}",
              "patientFirstName": letters(i), "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02",
              "billingProviderNpi": "1234567890", "billingProviderTaxId": "123456789",
              "dateOfService": "2026-10-01", "claimNumber": f"C{i}"}
    return {"schemaId": SCHEMAS[i % len(SCHEMAS)], "inputs": inputs}


def answer(question):
    kind = question["type"]
    if kind == "boolean":
        return True
    if kind == "dollar":
        return "125.00"
    if kind == "date":
        return "2026-11-20"
    if kind == "multiple" and question.get("allowedValues"):
        return question["allowedValues"][0]
    return "REF-123"


def work_queue(server, outcomes):
    status, page = server.call("GET", "/admin/v1/tasks?state=open&pageSize=500", token=ADMIN)
    for task in page.get("tasks", []):
        path = f"/admin/v1/tasks/{task['taskId']}"
        if server.call("POST", path + "/claim", token=ADMIN)[0] != 200:
            continue
        _, sheet = server.call("GET", path, token=ADMIN)
        answers = {q["name"]: answer(q) for q in sheet["questions"] if not q.get("when")}
        for q in sheet["questions"]:
            when = q.get("when")
            given = answers.get(when["field"]) if when else None
            if when and given is not None and str(given).lower() == when["equals"].lower():
                answers[q["name"]] = answer(q)
        body = {"answers": answers, "call": {"phoneNumber": sheet.get("phoneNumber") or "8005550123",
                                             "notes": "Placed by the measurement script."}}
        status, done = server.call("POST", path + "/complete", body, token=ADMIN)
        outcomes[task["reason"]] = outcomes.get(task["reason"], 0) + 1
        if status != 200:
            print(f"  completion refused: {status} {done}", file=sys.stderr)
    return len(page.get("tasks", []))


def run(count, fallback):
    work = tempfile.mkdtemp(prefix="switchboard-measure-")
    server = Server(work, fallback)
    declared = tomllib.load(open(os.path.join(ROOT, "config/default.toml"), "rb"))["schemas"]
    required = {s["id"]: [f["name"] for f in s["fields"] if f.get("required")] for s in declared}
    ids = []
    for start in range(0, count, 100):
        batch = [item(i) for i in range(start, min(count, start + 100))]
        status, created = server.call("POST", "/v1/requests", {"requests": batch}, token=server.token)
        if status != 200:
            server.stop()
            sys.exit(f"create refused: {status} {json.dumps(created)[:300]}")
        ids += [(r["requestId"], batch[k]["schemaId"]) for k, r in enumerate(created["requests"])]
    try:
        return measure(server, ids, required, count, fallback)
    finally:
        server.stop()


def measure(server, ids, required, count, fallback):
    tasks = {}
    started = time.time()
    pending = dict(ids)
    reads = {}
    while pending:
        if fallback:
            work_queue(server, tasks)
        for request_id in list(pending)[:200]:
            _, read = server.call("GET", f"/v1/requests/{request_id}", token=server.token)
            if read["state"] != "PROCESSING":
                reads[request_id] = read
                del pending[request_id]
        if time.time() - started > 1800:
            sys.exit(f"{len(pending)} requests still PROCESSING after 30 minutes")
        time.sleep(0.2)
    states, complete = {}, 0
    for request_id, schema in ids:
        read = reads[request_id]
        states[read["state"]] = states.get(read["state"], 0) + 1
        if read["state"] in ("SUCCESS", "PARTIAL") and all(f in read["results"] for f in required[schema]):
            complete += 1
    return complete / count, states, tasks, time.time() - started


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    for fallback in (False, True):
        share, states, tasks, seconds = run(count, fallback)
        label = "with human_fallback" if fallback else "without human_fallback"
        print(f"{label}: {share:.1%} of {count} requests SUCCESS or PARTIAL with every required field "
              f"({seconds:.0f} s); states {states}" + (f"; tasks completed by reason {tasks}" if fallback else ""))


if __name__ == "__main__":
    main()
