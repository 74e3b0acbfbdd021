#!/usr/bin/env python3
"""A simulated month of production requests, run twice: without and with `learned_call_windows` (issue 46,
operator contract §11). Measures what learning each payer's line is worth in the payer simulator.

The server runs the demo configuration on a manual clock with the simulator dialer (calls take no wall
time), the demo account with `payer_phone_lookup` only (every request is called) and room for every request
on its day. Over four weeks of business days (2026-09-14 to 2026-10-09, no federal holiday), clients submit
requests through the working day (8:00 to 16:59, New York time, the account's zone), spread evenly over the
hours and the payers. The script moves the clock hour by hour, creating that hour's requests and waiting
until the calls that may run have run; a request waiting for a learned window is placed when the clock
reaches it. Before the month, `--warm-up-weeks` (2) of the same traffic give the server a history to learn
from, as a server in service has (its statistics keep 90 days); only the month is measured. At the end it
reads every request and the payers' statistics (less what they held after the warm-up), and reports:

  - hold minutes per completed request (`SUCCESS` or `PARTIAL`): every call's hold, over the completed;
  - cost per completed request: every call's minutes, rounded up, at `[dialer] cost_per_minute` (0.12);
  - the share of requests completed before their due date ended (midnight after `dueDate`, New York);
  - requests that ended after their due date.

Needs python3 (standard library) and a built binary: SWITCHBOARD_BINARY, else the newer of
target/release/switchboard and target/debug/switchboard (CARGO_TARGET_DIR is honoured). Usage:

  scripts/simulate-month.py [--requests 5000] [--payers Aetna,Cigna,UnitedHealthcare] [--seed 7]
"""
import argparse, datetime, json, os, socket, subprocess, sys, tempfile, time, urllib.error, urllib.request
from zoneinfo import ZoneInfo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADMIN = "dev-admin-token"
LIVE_KEY, LIVE_SECRET = "sk_live_demo_7Qh2m9XcP4", "demo-live-secret-change-me"
NEW_YORK = ZoneInfo("America/New_York")
FIRST_DAY = datetime.date(2026, 9, 14)
# The warm-up ends two weeks before the month (no federal holiday in either).
BUSINESS_DAYS = 20
OPEN_HOURS = range(8, 17)
COST_PER_MINUTE = 0.12


def binary():
    if os.environ.get("SWITCHBOARD_BINARY"):
        return os.environ["SWITCHBOARD_BINARY"]
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    built = [os.path.join(target, profile, "switchboard") for profile in ("release", "debug")]
    built = [path for path in built if os.path.exists(path)]
    if not built:
        sys.exit("no switchboard binary: build one (cargo build) or set SWITCHBOARD_BINARY")
    # The newer of the two: an old release build beside a fresh debug one has not the code to measure.
    return max(built, key=os.path.getmtime)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def business_days(first, count):
    day, days = first, []
    while len(days) < count:
        if day.weekday() < 5:
            days.append(day)
        day += datetime.timedelta(days=1)
    return days


def instant(day, hour):
    """`hour`:00 of `day` in New York, as RFC 3339 UTC."""
    local = datetime.datetime(day.year, day.month, day.day, hour, tzinfo=NEW_YORK)
    return local.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Server:
    def __init__(self, work, learning, seed, first_day):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        config = open(os.path.join(ROOT, "config/default.toml")).read()
        features = '"payer_phone_lookup", "learned_call_windows"' if learning else '"payer_phone_lookup"'
        start = config.index("features = [")
        end = config.index("]", start)
        config = config[:start] + f"features = [{features}]" + config[end + 1:]
        config = config.replace("daily_call_capacity = 200", "daily_call_capacity = 100000")
        config = config.replace('mode = "system"', f'mode = "manual"\nstart = "{instant(first_day, 7)}"')
        config = config.replace("time_scale = 60.0", "time_scale = 100000000.0")
        config = config.replace("seed = 7", f"seed = {seed}")
        # One payer answers in Chicago time: its week is read there.
        config = config.replace('name = "Aetna"\n', 'name = "Aetna"\ntimezone = "America/Chicago"\n')
        self.config_path = os.path.join(work, "month.toml")
        open(self.config_path, "w").write(config)
        self.data_dir = os.path.join(work, "data")

    def start(self):
        env = dict(os.environ, RUST_LOG="error", SWITCHBOARD_BIND=f"127.0.0.1:{self.port}",
                   SWITCHBOARD_DATA_DIR=self.data_dir)
        self.process = subprocess.Popen([binary(), "serve", "--config", self.config_path], env=env,
                                        stdout=subprocess.DEVNULL)
        deadline = time.time() + 60
        while True:
            try:
                urllib.request.urlopen(self.base + "/readyz", timeout=1)
                return
            except Exception:
                if time.time() > deadline:
                    sys.exit("the server did not get ready")
                time.sleep(0.05)

    def stop(self):
        self.process.terminate()
        self.process.wait()

    def call(self, method, path, body=None, token=None, headers=None):
        request = urllib.request.Request(self.base + path, method=method,
                                         data=None if body is None else json.dumps(body).encode())
        request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        for key, value in (headers or {}).items():
            request.add_header(key, value)
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as e:
            sys.exit(f"{method} {path}: {e.code} {e.read()[:300]}")

    def token(self):
        return self.call("GET", "/v1/auth", headers={"Switchboard-API-Key": LIVE_KEY,
                                                     "Switchboard-API-Secret": LIVE_SECRET})["token"]

    def set_clock(self, at):
        self.call("POST", "/admin/v1/clock", {"set": at}, token=ADMIN)

    def settle(self):
        """Waits until no call ends and no request finishes for a while: what may run now has run."""
        last, quiet = None, 0
        while quiet < 4:
            stats = self.call("GET", "/admin/v1/orchestration", token=ADMIN)
            now = (stats["calls_ended"], stats["requests_finished"])
            quiet = quiet + 1 if now == last else 0
            last = now
            time.sleep(0.05)


def inputs(payer, n):
    return {"payerName": payer, "memberId": f"W{300_000_000 + n:09d}", "patientFirstName": "Ann",
            "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02", "billingProviderNpi": "1234567890",
            "groupNumber": "GRP100"}


def stats_of(server, payers):
    """The payers' statistics summed: hold seconds, calls, completed requests, what those cost."""
    total = {"hold": 0, "calls": 0, "completed": 0, "cost": 0.0, "median": {}}
    for payer in payers:
        stats = server.call("GET", f"/admin/v1/payers/{urllib.request.quote(payer)}/stats", token=ADMIN)
        total["hold"] += stats["holdSeconds"]
        total["calls"] += stats["calls"]
        total["completed"] += stats["completedRequests"]
        if stats["costPerCompletedRequest"]:
            total["cost"] += float(stats["costPerCompletedRequest"]) * stats["completedRequests"]
        total["median"][payer] = stats["medianHoldSeconds"]
    return total


def run_days(server, days, per_day, payers, first_n):
    """Creates `per_day` requests on each of `days`, evenly over the working hours; their ids."""
    ids, n = [], first_n
    for day in days:
        made = 0
        for index, hour in enumerate(OPEN_HOURS):
            server.set_clock(instant(day, hour))
            token = server.token()
            due = per_day * (index + 1) // len(OPEN_HOURS) - made
            items = []
            for _ in range(due):
                items.append({"schemaId": "vob-basic", "inputs": inputs(payers[n % len(payers)], n)})
                n += 1
            made += due
            if items:
                created = server.call("POST", "/v1/requests", {"requests": items}, token=token)
                ids += [entry["requestId"] for entry in created["requests"]]
            server.settle()
        # The evening: every window of the day has come, redials included.
        for late in (17, 23):
            server.set_clock(instant(day, late))
            server.settle()
    return ids


def run(learning, total, payers, seed, warm_weeks):
    work = tempfile.mkdtemp(prefix="switchboard-month-")
    # History first (the same traffic, weeks before the month measured), as a server in service has: what
    # was learned then is what the month's calls are placed by.
    warm_first = FIRST_DAY - datetime.timedelta(weeks=warm_weeks + 2)
    server = Server(work, learning, seed, warm_first)
    server.start()
    started = time.time()
    per_day = total // BUSINESS_DAYS
    try:
        run_days(server, business_days(warm_first, 5 * warm_weeks), per_day, payers, 10_000_000)
        before = stats_of(server, payers)
        days = business_days(FIRST_DAY, BUSINESS_DAYS)
        ids = run_days(server, days, per_day, payers, 0)
        # Past the last due date: everything has ended.
        server.set_clock(instant(days[-1] + datetime.timedelta(days=3), 12))
        server.settle()
        token = server.token()
        completed = on_time = late = processing = 0
        for request_id in ids:
            read = server.call("GET", f"/v1/requests/{request_id}", token=token)
            state = read["state"]
            if state == "PROCESSING":
                processing += 1
                continue
            finished = datetime.datetime.fromisoformat(read["completedAt"].replace("Z", "+00:00"))
            due_day = datetime.date.fromisoformat(read["dueDate"][:10])
            due_end = datetime.datetime.combine(due_day + datetime.timedelta(days=1), datetime.time(),
                                                tzinfo=NEW_YORK)
            if state in ("SUCCESS", "PARTIAL"):
                completed += 1
                on_time += finished < due_end
            late += finished >= due_end
        after = stats_of(server, payers)
    finally:
        server.stop()
    month_completed = max(1, after["completed"] - before["completed"])
    return {
        "requests": len(ids), "calls": after["calls"] - before["calls"], "completed": completed,
        "processing": processing,
        "hold_minutes_per_completed": (after["hold"] - before["hold"]) / 60 / month_completed,
        "cost_per_completed": (after["cost"] - before["cost"]) / month_completed,
        "completed_before_due": on_time / max(1, len(ids)), "late": late,
        "median_hold_by_payer": after["median"], "wall_seconds": time.time() - started,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--payers", default="Aetna,Cigna,UnitedHealthcare")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--warm-up-weeks", type=int, default=2,
                        help="weeks of the same traffic before the month, learned from but not measured")
    args = parser.parse_args()
    payers = args.payers.split(",")
    results = {}
    for learning in (False, True):
        label = "learned_call_windows" if learning else "without learning"
        print(f"running a month of {args.requests} requests, {label} ...", file=sys.stderr)
        results[label] = run(learning, args.requests, payers, args.seed, args.warm_up_weeks)
        print(json.dumps(results[label]), file=sys.stderr)
    base, learned = results["without learning"], results["learned_call_windows"]
    print(f"{'':34}{'without':>12}{'learning':>12}")
    for key, name, fmt in [("hold_minutes_per_completed", "hold minutes / completed request", "{:.1f}"),
                           ("cost_per_completed", "cost / completed request (USD)", "{:.2f}"),
                           ("completed_before_due", "completed before due date", "{:.1%}"),
                           ("late", "ended after due date", "{}"),
                           ("calls", "calls", "{}")]:
        print(f"{name:34}{fmt.format(base[key]):>12}{fmt.format(learned[key]):>12}")
    cut = 1 - learned["hold_minutes_per_completed"] / max(1e-9, base["hold_minutes_per_completed"])
    print(f"hold minutes per completed request: {cut:.1%} fewer with learning (target: at least 25%)")


if __name__ == "__main__":
    main()
