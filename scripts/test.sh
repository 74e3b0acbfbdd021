#!/usr/bin/env bash
# The test command: sets up what the tests need on a fresh machine, then runs every test of the workspace,
# and the black-box API tests a second time on PostgreSQL.
# The console's browser test needs Debian's headless Chromium; it is installed when missing and apt is
# usable (root). So is Debian's postgresql, whose server runs a private cluster for the PostgreSQL engine's
# tests (scripts/postgres.sh). Elsewhere, install `chromium` yourself or set SWITCHBOARD_SKIP_BROWSER=1 to skip that test.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "--- installing Debian's chromium for the console browser test"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

# The PostgreSQL engine's tests need a server: a private cluster, stopped when this script ends.
source scripts/postgres.sh
start_test_postgres

cargo test --workspace --locked "$@"

# The black-box API tests once more with every server on PostgreSQL, each on a fresh database of its own
# (tests/api/helpers/engine.rs); the few about sled's own files say they are skipped. `--workspace` keeps
# the features of the run above, so this runs its test binary as built, compiling nothing. Four tests at a
# time by default, on 2 cores too: these servers mostly wait on the database's round trips (measured on 2
# shared cores: 776 s with two at a time, 485 s with four).
echo "--- the black-box API tests again, every server on PostgreSQL (SWITCHBOARD_TEST_ENGINE=postgres)"
SWITCHBOARD_TEST_ENGINE=postgres RUST_TEST_THREADS="${RUST_TEST_THREADS:-4}" \
  cargo test --workspace --locked --test api "$@"
