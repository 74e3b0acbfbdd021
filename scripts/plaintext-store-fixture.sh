#!/usr/bin/env bash
# Writes tests/fixtures/plaintext-store.tar.gz: a data directory written by the last release before
# sealing (commit aa9168c), holding marked requests in the clear, for the migration test
# (tests/api/sealing/migration.rs). Usage: scripts/plaintext-store-fixture.sh PATH-TO-OLD-BINARY
set -euo pipefail
old="$1"
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
RUST_LOG=warn "$old" serve --data-dir "$work/data" --bind "127.0.0.1:$port" > "$work/stdout" &
pid=$!
base="http://127.0.0.1:$port"
until curl -sf "$base/readyz" >/dev/null; do sleep 0.1; done
token() { curl -sf -H "Switchboard-API-Key: $1" -H "Switchboard-API-Secret: $2" "$base/v1/auth" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])'; }
sandbox=$(token sk_test_demo_3Vn8kR1wZ6 demo-sandbox-secret-change-me)
live=$(token sk_live_demo_7Qh2m9XcP4 demo-live-secret-change-me)
claim='{"schemaId":"claim-status-basic","internalId":"CLMPHIfixturealpha","internalTag":"TAGPHIfixturebeta",
  "inputs":{"payerName":"UHC","groupNumber":"GRP7351946","memberId":"W735194601","patientFirstName":"Qzxfixturejo",
  "patientLastName":"Vqjfixtureroe","patientDateOfBirth":"1980-04-12","dateOfService":"2026-10-01",
  "billingProviderNpi":"1234567890","billingProviderTaxId":"12-3456789","sandboxScenario":"success"}}'
vob='{"schemaId":"vob-basic","internalId":"CLMPHIfixturegamma","internalTag":"TAGPHIfixturebeta",
  "inputs":{"payerName":"Aetna","phoneNumber":"(800) 555-0123","memberId":"W735194602","patientFirstName":"Qzxfixturejo",
  "patientLastName":"Vqjfixtureroe","patientDateOfBirth":"1980-01-02","billingProviderNpi":"1234567890"}}'
id_of() { python3 -c 'import json,sys; b=json.load(sys.stdin); print(b.get("requestId") or b["requests"][0]["requestId"])'; }
sandbox_id=$(curl -sf -X POST -H "Authorization: Bearer $sandbox" -H 'Content-Type: application/json' -d "$claim" "$base/v1/requests" | id_of)
live_id=$(curl -sf -X POST -H "Authorization: Bearer $live" -H 'Content-Type: application/json' -d "$vob" "$base/v1/requests" | id_of)
for _ in $(seq 200); do
  state=$(curl -sf -H "Authorization: Bearer $sandbox" "$base/v1/requests/$sandbox_id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
  [ "$state" != PROCESSING ] && break
  sleep 0.1
done
curl -sf -H "Authorization: Bearer $sandbox" "$base/v1/requests/$sandbox_id" > "$work/sandbox.json"
kill -TERM "$pid"; wait "$pid" || true
# A recording as a release before sealing kept it: the platform's bytes as downloaded.
mkdir -p "$work/data/recordings"
printf 'RIFF\x24\x00\x00\x00WAVEfmt fixture-recording' > "$work/data/recordings/0190f5e2-8000-7000-8000-00000000abcd.wav"
python3 - "$work" "$sandbox_id" "$live_id" > "$work/data.expected.json" <<'PY'
import json, sys
work, sandbox_id, live_id = sys.argv[1:]
def stable(value):
    # Signed links expire some time after the read: left out, at any depth.
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k != "recordingDownloadUrl"}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value
sandbox = stable(json.load(open(f"{work}/sandbox.json")))
print(json.dumps({"sandbox": sandbox, "sandboxId": sandbox_id, "liveId": live_id}, indent=1))
PY
mv "$work/data.expected.json" "$repo/tests/fixtures/plaintext-store.expected.json"
tar -C "$work" -czf "$repo/tests/fixtures/plaintext-store.tar.gz" data
echo "wrote tests/fixtures/plaintext-store.tar.gz ($(du -h "$repo/tests/fixtures/plaintext-store.tar.gz" | cut -f1))"
