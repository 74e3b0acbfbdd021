#!/usr/bin/env bash
# Checks the systemd unit of docs/operations.md with `systemd-analyze verify` and prints its exposure
# (`systemd-analyze security`). Uses the debug binary in place of /usr/local/bin/switchboard, since verify
# checks that the ExecStart program exists. Needs systemd-analyze (Debian: the systemd package).
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${CARGO_TARGET_DIR:-target}/debug/switchboard"
[ -x "$binary" ] || cargo build --bin switchboard
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$binary" "$dir/switchboard.service" <<'PY'
import re, sys, os
text = open("docs/operations.md").read()
unit = re.search(r"### As a service.*?```ini\n(.*?)```", text, re.S).group(1)
open(sys.argv[2], "w").write(unit.replace("/usr/local/bin/switchboard", os.path.abspath(sys.argv[1])))
PY
systemd-analyze verify "$dir/switchboard.service"
(cd "$dir" && systemd-analyze security --offline=yes switchboard.service | tail -1)
