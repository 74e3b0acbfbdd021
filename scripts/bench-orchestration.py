#!/usr/bin/env python3
"""Orchestration and webhook benchmarks (issues 4 and 5), on the release binary:

  1. 10,000 sandbox requests from POST to terminal state at time_scale 1,000,000, and until a local
     receiver has acknowledged all 10,000 webhooks (deliveries/s to one receiver);
  2. the same with webhooks spread over 50 receivers;
  3. resident memory with 10,000 requests in flight (sandbox scenario `stuck`);
  4. resident memory with 100,000 booked-but-not-due requests, and time from start to /readyz with them
     stored.

Needs python3 only (standard library). Usage: scripts/bench-orchestration.py
"""
import http.server, json, os, shutil, subprocess, sys, tempfile, threading, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, "target/release/switchboard")
INPUTS = {"payerName": "Aetna", "memberId": "W123456789", "patientFirstName": "Ann", "patientLastName": "Lee",
          "patientDateOfBirth": "1980-01-02", "billingProviderNpi": "1234567890"}


class Receiver(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        self.count = 0
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with outer.lock:
                    outer.count += 1
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}/hook"


class Server:
    def __init__(self, work, clock_start, port, data_dir=None):
        self.base = f"http://127.0.0.1:{port}"
        self.data_dir = data_dir or os.path.join(work, "data")
        config = open(os.path.join(ROOT, "config/default.toml")).read()
        config = config.replace("daily_call_capacity = 200", "daily_call_capacity = 10000000")
        config = config.replace('mode = "system"', f'mode = "manual"\nstart = "{clock_start}"')
        config = config.replace("time_scale = 60.0", "time_scale = 1000000.0")
        config = config.replace("allow_private_targets = false", "allow_private_targets = true")
        self.config_path = os.path.join(work, "bench.toml")
        open(self.config_path, "w").write(config)
        self.port = port

    def start(self):
        env = dict(os.environ, RUST_LOG="error", SWITCHBOARD_BIND=f"127.0.0.1:{self.port}", SWITCHBOARD_DATA_DIR=self.data_dir)
        started = time.perf_counter()
        self.process = subprocess.Popen([BINARY, "serve", "--config", self.config_path], env=env, stdout=subprocess.DEVNULL)
        while True:
            try:
                urllib.request.urlopen(self.base + "/readyz", timeout=1)
                break
            except Exception:
                time.sleep(0.02)
        self.token = self.call("GET", "/v1/auth", headers={"Switchboard-API-Key": "sk_test_demo_3Vn8kR1wZ6",
                                                           "Switchboard-API-Secret": "demo-sandbox-secret-change-me"})["token"]
        return time.perf_counter() - started

    def stop(self):
        self.process.terminate()
        self.process.wait()

    def rss_mib(self):
        return int(open(f"/proc/{self.process.pid}/status").read().split("VmRSS:")[1].split()[0]) / 1024

    def call(self, method, path, body=None, headers=None, token=None):
        request = urllib.request.Request(self.base + path, data=json.dumps(body).encode() if body is not None else None, method=method)
        request.add_header("Content-Type", "application/json")
        if token or getattr(self, "token", None):
            request.add_header("Authorization", f"Bearer {token or self.token}")
        for k, v in (headers or {}).items():
            request.add_header(k, v)
        with urllib.request.urlopen(request, timeout=300) as response:
            return json.loads(response.read())

    def admin(self, path):
        return self.call("GET", path, token="dev-admin-token")

    def create(self, count, scenario="success", urls=None):
        ids = []
        for start in range(0, count, 500):
            items = []
            for i in range(start, min(count, start + 500)):
                item = {"schemaId": "vob-basic", "inputs": dict(INPUTS, sandboxScenario=scenario)}
                if urls:
                    item["webhookUrl"] = urls[i % len(urls)]
                items.append(item)
            ids += [r["requestId"] for r in self.call("POST", "/v1/requests", {"requests": items})["requests"]]
        return ids


def wait(predicate, limit=600):
    deadline = time.perf_counter() + limit
    while not predicate():
        if time.perf_counter() > deadline:
            raise SystemExit("timed out")
        time.sleep(0.05)


def run_completion(work, receivers, label):
    server = Server(work, "2026-11-23T14:00:00Z", 18095, os.path.join(work, label))
    server.start()
    try:
        started = time.perf_counter()
        server.create(10_000, urls=[r.url for r in receivers])
        created = time.perf_counter() - started
        wait(lambda: server.admin("/admin/v1/orchestration")["requests_finished"] >= 10_000)
        terminal = time.perf_counter() - started
        wait(lambda: sum(r.count for r in receivers) >= 10_000)
        delivered = time.perf_counter() - started
        print(f"{label}: 10,000 created in {created:.1f} s; all terminal after {terminal:.1f} s; "
              f"all webhooks acknowledged after {delivered:.1f} s "
              f"({10_000 / delivered:,.0f} requests/s end to end, creation to acknowledged webhook)")
    finally:
        server.stop()


def main():
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp()
    try:
        run_completion(work, [Receiver()], "one receiver")
        run_completion(work, [Receiver() for _ in range(50)], "50 receivers")

        server = Server(work, "2026-11-23T14:00:00Z", 18096, os.path.join(work, "inflight"))
        server.start()
        server.create(10_000, scenario="stuck")
        wait(lambda: server.admin("/admin/v1/orchestration")["running"] >= 10_000)
        print(f"resident memory with 10,000 requests in flight: {server.rss_mib():,.0f} MiB")
        server.stop()

        # A Saturday: everything books onto Monday and waits.
        server = Server(work, "2026-11-21T14:00:00Z", 18097, os.path.join(work, "booked"))
        server.start()
        server.create(100_000)
        print(f"resident memory with 100,000 booked-but-not-due requests: {server.rss_mib():,.0f} MiB")
        server.stop()
        ready = server.start()
        print(f"start to /readyz with 100,000 stored requests: {ready * 1000:.0f} ms")
        print(f"resident memory after that restart: {server.rss_mib():,.0f} MiB")
        server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
