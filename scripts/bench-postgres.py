#!/usr/bin/env python3
"""Switchboard on PostgreSQL against the embedded store, side by side on this machine: durable single creates
and GET by id, each in alternating rounds against sled in the same run (the ratio is PostgreSQL's figure over
sled's), on one node and through a second node standing by (which forwards every call to the first); the
database's size per stored request; and the takeover time of a standby after kill -9 of the node holding
the lease.

Uses scripts/bench's servers and load (wrk), and a private PostgreSQL cluster from scripts/postgres.sh,
stopped at the end (or SWITCHBOARD_BENCH_POSTGRES_URL, a user that may create databases). The database runs
on the load generator's core, the Switchboard under test on the server's core.
Usage: scripts/bench-postgres.py   (env DURATION=10s, ROUNDS=3, REQUESTS=20000 for the size figure)
"""
import importlib.machinery, importlib.util, json, os, statistics, subprocess, sys, tempfile, time, \
    urllib.request, uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
loader = importlib.machinery.SourceFileLoader("bench", os.path.join(ROOT, "scripts/bench"))
spec = importlib.util.spec_from_loader("bench", loader)
bench = importlib.util.module_from_spec(spec)
loader.exec_module(bench)
REQUESTS = int(os.environ.get("REQUESTS", "20000"))


def sh(script):
    return subprocess.run(["bash", "-c", f"cd {ROOT} && source scripts/postgres.sh && {script}"],
                          check=True, capture_output=True, text=True).stdout


def psql(url, sql):
    return subprocess.run(["psql", url, "-Atc", sql], check=True, capture_output=True, text=True).stdout.strip()


class Cluster:
    def __enter__(self):
        self.url = os.environ.get("SWITCHBOARD_BENCH_POSTGRES_URL")
        self.dir = None
        if not self.url:
            out = sh('start_test_postgres >&2; trap - EXIT; echo "$SWITCHBOARD_TEST_POSTGRES_URL $PG_TEST_DIR"')
            self.url, self.dir = out.split()
        return self

    def database(self, binary=None):
        """A new database, migrated by `binary` (the release build by default)."""
        name = "switchboard_bench_" + uuid.uuid4().hex[:12]
        psql(self.url, f"CREATE DATABASE {name}")
        base, _, options = self.url.partition("?")
        url = base.rsplit("/", 1)[0] + "/" + name + ("?" + options if options else "")
        subprocess.run([binary or bench.BINARY, "migrate", "--config", self.config_for(url)], check=True,
                       capture_output=True)
        return url

    def config_for(self, url):
        path = os.path.join(tempfile.mkdtemp(), "migrate.toml")
        config = open(os.path.join(ROOT, "config/default.toml")).read()
        open(path, "w").write(on_postgres(config, url))
        return path

    def __exit__(self, *exc):
        if self.dir:
            sh(f'PG_TEST_DIR={self.dir} stop_test_postgres')


def on_postgres(config, url):
    return config.replace("[storage]\n", f'[storage]\nkind = "postgres"\nurl = "{url}"\n', 1)


class PostgresSwitchboard(bench.Switchboard):
    def __init__(self, work, name, port, url, key, **kwargs):
        super().__init__(work, name, port, **kwargs)
        config = open(self.config).read()
        open(self.config, "w").write(on_postgres(config, url))
        self.key = key

    def start(self):
        os.environ["SWITCHBOARD_MASTER_KEY"] = self.key
        try:
            return super().start()
        finally:
            del os.environ["SWITCHBOARD_MASTER_KEY"]


def master_key(work):
    path = os.path.join(work, "master.key")
    subprocess.run([bench.BINARY, "keys", "generate", "--out", path], check=True, capture_output=True)
    return open(path).read().strip()


def wait_serving(base, limit=60):
    """Until /readyz says the node runs requests itself: a standby answers 200 too, with "standby"."""
    deadline = time.perf_counter() + limit
    while time.perf_counter() < deadline:
        try:
            if json.load(urllib.request.urlopen(base + "/readyz", timeout=1))["status"] == "ready":
                return
        except Exception:
            pass
        time.sleep(0.01)
    sys.exit(f"{base} never took over")


def rounds(label, run):
    ratios = []
    for r in range(bench.ROUNDS):
        sled, postgres = run()
        ratios.append(postgres / sled)
        print(f"  {label} round {r}: sled {sled:,.0f}/s  postgres {postgres:,.0f}/s  {postgres / sled:.2f}x", flush=True)
    print(f"{label}: postgres/sled median {statistics.median(ratios):.2f}x "
          f"(rounds {', '.join(f'{x:.2f}' for x in ratios)})", flush=True)


def main():
    # The binary under test is this checkout's: a release build left from another commit would be measured
    # in its place without a word.
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "switchboard", "--example", "ceiling"],
                   cwd=ROOT, check=True)
    work = tempfile.mkdtemp()
    key = master_key(work)
    with Cluster() as cluster:
        sled = bench.Switchboard(work, "sled", 18291, paused=True)
        postgres_url = cluster.database()
        postgres = PostgresSwitchboard(work, "postgres", 18292, postgres_url, key, paused=True)
        sled.start()
        postgres.start()
        try:
            some = {}

            def creates(server):
                return bench.wrk(server.base + "/v1/requests", work, server.live, bench.CREATE, fresh_ids=True)[0]

            def reads(server):
                # A standby reads the request the node it forwards to created.
                request = some.get(server.name, some.get("postgres"))
                return bench.wrk(f"{server.base}/v1/requests/{request}", work, server.live)[0]

            def against_sled(measure, other):
                return lambda: (measure(sled), measure(other))

            rounds("durable single create", against_sled(creates, postgres))
            some.update({s.name: bench.call(s.base, "POST", "/v1/requests", bench.CREATE, s.live)["requestId"]
                         for s in (sled, postgres)})
            rounds("GET by id", against_sled(reads, postgres))

            # A second node on the same database stands by and forwards every call to the first.
            standby = PostgresSwitchboard(work, "forwarding", 18296, postgres_url, key, paused=True)
            standby.start()
            try:
                rounds("durable single create through a standby", against_sled(creates, standby))
                rounds("GET by id through a standby", against_sled(reads, standby))
            finally:
                standby.stop()
        finally:
            sled.stop()
            postgres.stop()

        url = cluster.database()
        sized = PostgresSwitchboard(work, "sized", 18293, url, key, paused=True)
        sized.start()
        try:
            before = int(psql(url, "SELECT pg_database_size(current_database())"))
            sized.create(REQUESTS, sized.live)
            psql(url, "CHECKPOINT")
            after = int(psql(url, "SELECT pg_database_size(current_database())"))
        finally:
            sized.stop()
        print(f"database size: {(after - before) / REQUESTS:,.0f} bytes per request created in batches "
              f"of 500 ({REQUESTS:,} requests)", flush=True)

        url = cluster.database()
        first = PostgresSwitchboard(work, "first", 18294, url, key)
        first.start()
        standby = PostgresSwitchboard(work, "standby", 18295, url, key)
        os.environ["SWITCHBOARD_MASTER_KEY"] = key
        env = dict(os.environ, RUST_LOG="error", SWITCHBOARD_BIND="127.0.0.1:18295",
                   SWITCHBOARD_DATA_DIR=standby.data_dir)
        del os.environ["SWITCHBOARD_MASTER_KEY"]
        process = subprocess.Popen([bench.BINARY, "serve", "--config", standby.config], env=env,
                                   stdout=subprocess.DEVNULL)
        bench.wait_http(standby.base + "/readyz", limit=60)
        first.process.kill()
        killed = time.perf_counter()
        wait_serving(standby.base)
        print(f"takeover after kill -9: {time.perf_counter() - killed:.2f} s until the standby runs requests",
              flush=True)
        process.terminate()
        process.wait()


if __name__ == "__main__":
    sys.exit(main())
