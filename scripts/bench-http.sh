#!/usr/bin/env bash
# HTTP throughput of the read paths: GET /healthz and GET /v1/schemas/{id} with 64 concurrent connections.
# Needs wrk (Debian: apt-get install -y wrk). Builds the release binary, serves the embedded demo config
# from a temporary data directory on 127.0.0.1:18080, and prints wrk's summary for each endpoint.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "wrk is not installed: apt-get install -y wrk" >&2; exit 1; }

DURATION=${DURATION:-15s}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
PORT=${PORT:-18080}
BASE="http://127.0.0.1:$PORT"

cargo build --release --quiet
DATA_DIR=$(mktemp -d)
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$DATA_DIR"' EXIT
RUST_LOG=warn SWITCHBOARD_BIND="127.0.0.1:$PORT" SWITCHBOARD_DATA_DIR="$DATA_DIR" ./target/release/switchboard >/dev/null &
SERVER=$!
for _ in $(seq 1 100); do curl -sf "$BASE/readyz" >/dev/null && break; sleep 0.1; done

TOKEN=$(curl -sf -H 'Switchboard-API-Key: sk_live_demo_7Qh2m9XcP4' -H 'Switchboard-API-Secret: demo-live-secret-change-me' \
  "$BASE/v1/auth" | sed -E 's/.*"token":"([^"]+)".*/\1/')

echo "== GET /healthz ($CONNECTIONS connections, $DURATION)"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "$BASE/healthz"
echo
echo "== GET /v1/schemas/claim-status-basic ($CONNECTIONS connections, $DURATION)"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -H "Authorization: Bearer $TOKEN" "$BASE/v1/schemas/claim-status-basic"
