#!/usr/bin/env python3
"""Two builds of Switchboard side by side on one workload: sandbox requests from POST until a local receiver
has acknowledged every webhook, at time_scale 1,000,000, in alternating rounds (A then B, then B then A, ...),
so both see the same machine. Prints each round and the median of B's rate over A's.

Each round starts a fresh server: a fresh data dir on sled, or with --postgres a fresh database on a private
PostgreSQL cluster from scripts/postgres.sh (stopped at the end; or SWITCHBOARD_BENCH_POSTGRES_URL, a user that
may create databases), migrated by the binary under test.

Usage: scripts/bench-ab-orchestration.py OLD_BINARY NEW_BINARY [--postgres]
  env REQUESTS=4000 (per round), ROUNDS=4
Build the binaries with `cargo build --release` at each commit and copy target/release/switchboard aside.
"""
import argparse, importlib.util, os, statistics, subprocess, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


orchestration = load("orchestration", "scripts/bench-orchestration.py")
postgres = load("bench_postgres", "scripts/bench-postgres.py")
REQUESTS = int(os.environ.get("REQUESTS", "4000"))
ROUNDS = int(os.environ.get("ROUNDS", "4"))


def one_round(binary, cluster):
    """Requests per second from the first POST to the last acknowledged webhook, on a fresh server."""
    orchestration.BINARY = binary
    work = tempfile.mkdtemp()
    server = orchestration.Server(work, "2026-11-23T14:00:00Z", 18195, os.path.join(work, "data"))
    if cluster:
        key = os.path.join(work, "master.key")
        subprocess.run([binary, "keys", "generate", "--out", key], check=True, capture_output=True)
        os.environ["SWITCHBOARD_MASTER_KEY"] = open(key).read().strip()
        config = open(server.config_path).read()
        open(server.config_path, "w").write(postgres.on_postgres(config, cluster.database(binary)))
    receiver = orchestration.Receiver()
    server.start()
    try:
        started = time.perf_counter()
        server.create(REQUESTS, urls=[receiver.url])
        orchestration.wait(lambda: server.admin("/admin/v1/orchestration")["requests_finished"] >= REQUESTS)
        terminal = time.perf_counter() - started
        orchestration.wait(lambda: receiver.count >= REQUESTS)
        delivered = time.perf_counter() - started
    finally:
        server.stop()
        receiver.shutdown()
        os.environ.pop("SWITCHBOARD_MASTER_KEY", None)
    return REQUESTS / delivered, terminal, delivered


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args()
    binaries = {"A": os.path.abspath(args.old), "B": os.path.abspath(args.new)}

    def run(cluster):
        rates = {"A": [], "B": []}
        for r in range(ROUNDS):
            for label in ("A", "B") if r % 2 == 0 else ("B", "A"):
                rate, terminal, delivered = one_round(binaries[label], cluster)
                rates[label].append(rate)
                print(f"{label} round {r}: all terminal after {terminal:.1f} s, all webhooks acknowledged after "
                      f"{delivered:.1f} s: {rate:,.0f} requests/s", flush=True)
        ratios = [b / a for a, b in zip(rates["A"], rates["B"])]
        print(f"B/A end to end, {REQUESTS:,} requests per round on {'PostgreSQL' if cluster else 'sled'}: median "
              f"{statistics.median(ratios):.2f}x (rounds {', '.join(f'{x:.2f}' for x in ratios)})", flush=True)

    if args.postgres:
        with postgres.Cluster() as cluster:
            run(cluster)
    else:
        run(None)


if __name__ == "__main__":
    main()
