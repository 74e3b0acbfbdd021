#!/usr/bin/env bash
# Checks the systemd unit of docs/operations.md as written with `systemd-analyze verify`, after the page's
# install step put the debug binary at /usr/local/bin/switchboard inside a scratch root (holding a copy of
# this system's units, which verify resolves the unit's dependencies against), and prints its exposure
# (`systemd-analyze security`). Needs systemd-analyze (Debian: the systemd package). The same check runs
# in the tests (tests/api/deployment.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${CARGO_TARGET_DIR:-target}/debug/switchboard"
[ -x "$binary" ] || cargo build --bin switchboard
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/lib/systemd" "$root/usr/local/bin" "$root/etc/systemd/system"
cp -a /usr/lib/systemd/system "$root/usr/lib/systemd/"
python3 - "$root/etc/systemd/system/switchboard.service" <<'PY'
import re, sys
text = open("docs/operations.md").read()
unit = re.search(r"### As a service.*?```ini\n(.*?)```", text, re.S).group(1)
open(sys.argv[1], "w").write(unit)
PY
install -m 0755 "$binary" "$root/usr/local/bin/switchboard"
systemd-analyze verify --root="$root" /etc/systemd/system/switchboard.service
(cd "$root/etc/systemd/system" && systemd-analyze security --offline=yes switchboard.service | tail -1)
