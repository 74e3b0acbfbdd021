#!/usr/bin/env python3
"""Electronic channel benchmark (issue 10), against a local stand-in for Stedi that answers at once:

  1. time from create to terminal of a `digital_only` request (one eligibility inquiry, no call),
     sequentially, median and 95th percentile;
  2. inquiries per second the channel sustains: a batch of requests is created at once and the stand-in
     counts the inquiries it answers per second of wall time (first to last).

The stand-in answers the eligibility check with an active-coverage 271 in Stedi's JSON shape. Switchboard
runs with `[electronic] kind = "stedi"` pointed at it, a schema whose only required field a 271 answers,
and a system clock (requests are due at once).

Needs python3 only (standard library). Usage:
  scripts/bench-electronic.py            # uses target/release/switchboard, else target/debug/switchboard
  SWITCHBOARD_BINARY=path scripts/bench-electronic.py
"""
import http.server, json, os, shutil, statistics, subprocess, sys, tempfile, threading, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEY = "bench_stedi_key"
INPUTS = {"payerName": "Aetna", "phoneNumber": "8005550101", "memberId": "W123456789", "patientFirstName": "Ann",
          "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02", "billingProviderNpi": "1234567890"}
SCHEMA = """
[[schemas]]
id = "eligibility-check"
request_type = "vob"
version = 1
required_inputs = ["payerName", "phoneNumber", "memberId", "patientFirstName", "patientLastName",
                   "patientDateOfBirth", "billingProviderNpi"]

  [[schemas.fields]]
  name = "planActive"
  label = "Plan active"
  description = "Is the plan active?"
  type = "boolean"
  required = true
  electronic = { benefit = "active_coverage" }

  [[schemas.fields]]
  name = "deductible"
  label = "Deductible"
  description = "What is the individual in-network deductible?"
  type = "dollar"
  electronic = { benefit = "deductible", network = "in", coverage = "individual", amount = "calendar_year" }
"""


class FakeStedi(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024

    def __init__(self):
        self.times = []
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                if self.headers.get("Authorization") != KEY:
                    return self.reply(403, {"code": "AccessDeniedException", "message": "bad key"})
                with outer.lock:
                    outer.times.append(time.perf_counter())
                self.reply(200, {
                    "id": "ec_00000000-0000-0000-0000-000000000000", "controlNumber": request["controlNumber"],
                    "errors": [], "tradingPartnerServiceId": request["tradingPartnerServiceId"],
                    "benefitsInformation": [
                        {"code": "1", "serviceTypeCodes": ["30"], "inPlanNetworkIndicatorCode": "W"},
                        {"code": "C", "coverageLevelCode": "IND", "inPlanNetworkIndicatorCode": "Y",
                         "timeQualifierCode": "23", "serviceTypeCodes": ["30"], "benefitAmount": "1500"},
                    ]})

            def reply(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}/2024-04-01"


def call(base, method, path, token=None, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method, headers=dict(headers or {}))
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if data:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def main():
    binary = os.environ.get("SWITCHBOARD_BINARY") or next(
        (p for p in (os.path.join(ROOT, "target/release/switchboard"), os.path.join(ROOT, "target/debug/switchboard"))
         if os.path.exists(p)), None)
    if not binary:
        sys.exit("build Switchboard first: cargo build --release")
    fake = FakeStedi()
    work = tempfile.mkdtemp(prefix="bench-electronic-")
    config = open(os.path.join(ROOT, "config/default.toml")).read()
    config = config.replace("daily_call_capacity = 200", "daily_call_capacity = 10000000")
    config = config.replace('kind = "simulated"                       # simulated | stedi | none',
                            f'kind = "stedi"\n[electronic.stedi]\napi_key = "{KEY}"\nbase_url = "{fake.url}"\n#')
    config = config.replace('schemas = ["claim-status-basic", "claim-appeal-basic", "vob-basic", "prior-auth-status"]',
                            'schemas = ["claim-status-basic", "claim-appeal-basic", "vob-basic", "prior-auth-status", "eligibility-check"]')
    config += SCHEMA
    path = os.path.join(work, "bench.toml")
    open(path, "w").write(config)
    port = 18000 + os.getpid() % 1000
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, RUST_LOG="error", SWITCHBOARD_BIND=f"127.0.0.1:{port}",
               SWITCHBOARD_DATA_DIR=os.path.join(work, "data"))
    process = subprocess.Popen([binary, "serve", "--config", path], env=env, stdout=subprocess.DEVNULL)
    try:
        while True:
            try:
                urllib.request.urlopen(base + "/readyz", timeout=1)
                break
            except Exception:
                time.sleep(0.05)
        token = call(base, "GET", "/v1/auth", headers={"Switchboard-API-Key": "sk_live_demo_7Qh2m9XcP4",
                                                      "Switchboard-API-Secret": "demo-live-secret-change-me"})["token"]

        latencies = []
        for i in range(int(os.environ.get("BENCH_SEQUENTIAL", "40"))):
            inputs = dict(INPUTS, memberId=f"W{i:09d}")
            started = time.perf_counter()
            request_id = call(base, "POST", "/v1/requests", token, {"schemaId": "eligibility-check", "inputs": inputs})["requestId"]
            while True:
                read = call(base, "GET", f"/v1/requests/{request_id}", token)
                if read["state"] != "PROCESSING":
                    break
                time.sleep(0.005)
            latencies.append(time.perf_counter() - started)
            assert read["modality"] == "digital_only", read
        latencies.sort()
        p95 = latencies[int(0.95 * (len(latencies) - 1))]
        print(f"create -> terminal, digital_only ({len(latencies)} sequential): "
              f"median {statistics.median(latencies) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms")

        total = int(os.environ.get("BENCH_BATCH", "2000"))
        before = len(fake.times)
        items = [{"schemaId": "eligibility-check", "inputs": dict(INPUTS, memberId=f"B{i:09d}")} for i in range(total)]
        for start in range(0, total, 1000):
            call(base, "POST", "/v1/requests", token, {"requests": items[start:start + 1000]})
        deadline = time.time() + 600
        while len(fake.times) - before < total and time.time() < deadline:
            time.sleep(0.05)
        times = fake.times[before:]
        span = times[-1] - times[0]
        print(f"inquiries answered: {len(times)} of {total} in {span:.2f} s: {len(times) / span:.0f} inquiries/s")
    finally:
        process.terminate()
        process.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
