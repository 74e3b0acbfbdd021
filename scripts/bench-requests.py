#!/usr/bin/env python3
"""Request-intake benchmarks: durable single creates/s (64 clients), 500-entry batch latency, GET by id/s,
and list page latency at page 1 and page 1000 of 100,000 stored requests.

Needs wrk (apt-get install -y wrk) and python3 (standard library only). Builds the release binary, serves a
copy of the demo config with a daily capacity large enough never to overflow, from a temporary data dir.
Usage: scripts/bench-requests.py   (env DURATION=10s, PORT=18090)
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PORT = int(os.environ.get("PORT", "18090"))
DURATION = os.environ.get("DURATION", "10s")
BASE = f"http://127.0.0.1:{PORT}"
INPUTS = {
    "payerName": "Aetna", "phoneNumber": "8005550123", "memberId": "W123456789", "patientFirstName": "Ann",
    "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02", "dateOfService": "2026-10-01",
    "billingProviderNpi": "1234567890", "billingProviderTaxId": "12-3456789", "groupNumber": "G100",
}


def call(method, path, token=None, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(BASE + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    for k, v in (headers or {}).items():
        request.add_header(k, v)
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def wrk(label, url, token, script=None):
    args = ["wrk", "-t2", "-c64", f"-d{DURATION}", "--latency", "-H", f"Authorization: Bearer {token}"]
    if script:
        args += ["-s", script]
    out = subprocess.run(args + [url], capture_output=True, text=True, check=True).stdout
    rps = next(l.split()[1] for l in out.splitlines() if l.startswith("Requests/sec"))
    p50 = next(l.split()[1] for l in out.splitlines() if l.strip().startswith("50%"))
    p99 = next(l.split()[1] for l in out.splitlines() if l.strip().startswith("99%"))
    errors = [l.strip() for l in out.splitlines() if "Non-2xx" in l or "Socket errors" in l]
    print(f"{label:<48} {float(rps):>10,.0f} req/s   p50 {p50:>8}   p99 {p99:>8}   {' '.join(errors)}")


def main():
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed: apt-get install -y wrk")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp()
    config = open(os.path.join(ROOT, "config/default.toml")).read().replace(
        "daily_call_capacity = 200", "daily_call_capacity = 10000000")
    config_path = os.path.join(work, "bench.toml")
    open(config_path, "w").write(config)
    env = dict(os.environ, RUST_LOG="warn", SWITCHBOARD_BIND=f"127.0.0.1:{PORT}",
               SWITCHBOARD_DATA_DIR=os.path.join(work, "data"))
    server = subprocess.Popen([os.path.join(ROOT, "target/release/switchboard"), "serve", "--config", config_path],
                              env=env, stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(BASE + "/readyz", timeout=1)
                break
            except Exception:
                time.sleep(0.1)
        token = call("GET", "/v1/auth", headers={"Switchboard-API-Key": "sk_live_demo_7Qh2m9XcP4",
                                                 "Switchboard-API-Secret": "demo-live-secret-change-me"})["token"]
        body = json.dumps({"schemaId": "claim-status-basic", "inputs": INPUTS})
        script = os.path.join(work, "post.lua")
        open(script, "w").write(
            'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
            f"wrk.body = {json.dumps(body)}\n")
        wrk("POST /v1/requests (single, durable)", BASE + "/v1/requests", token, script)

        batch = {"requests": [{"schemaId": "claim-status-basic", "inputs": INPUTS} for _ in range(500)]}
        timings = []
        for _ in range(10):
            started = time.perf_counter()
            call("POST", "/v1/requests", token, batch)
            timings.append((time.perf_counter() - started) * 1000)
        print(f"{'POST /v1/requests (500-entry batch)':<48} median {statistics.median(timings):.1f} ms   "
              f"max {max(timings):.1f} ms over 10")

        some_id = call("POST", "/v1/requests", token, {"schemaId": "claim-status-basic", "inputs": INPUTS})["requestId"]
        wrk("GET /v1/requests/{id}", f"{BASE}/v1/requests/{some_id}", token)

        # Top up to 100,000 requests created today.
        count = 0
        cursor = None
        while True:
            query = "/v1/requests?pageSize=500" + (f"&pageToken={cursor}" if cursor else "")
            page = call("GET", query, token)
            count += len(page["requests"])
            cursor = page.get("nextPageToken")
            if not cursor:
                break
        while count < 100_000:
            n = min(500, 100_000 - count)
            call("POST", "/v1/requests", token, {"requests": batch["requests"][:n]})
            count += n
        print(f"{'stored requests':<48} {count:,}")
        cursor = None
        for _ in range(999):
            page = call("GET", "/v1/requests?pageSize=100" + (f"&pageToken={cursor}" if cursor else ""), token)
            cursor = page["nextPageToken"]
        wrk("GET /v1/requests page 1 (pageSize 100)", f"{BASE}/v1/requests?pageSize=100", token)
        wrk("GET /v1/requests page 1000 (pageSize 100)", f"{BASE}/v1/requests?pageSize=100&pageToken={cursor}", token)
        rss = int(open(f"/proc/{server.pid}/status").read().split("VmRSS:")[1].split()[0])
        print(f"{'server resident memory':<48} {rss / 1024:,.0f} MiB")
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
