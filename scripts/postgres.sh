#!/usr/bin/env bash
# Sourced by scripts/test.sh: starts a private PostgreSQL cluster for the tests of the PostgreSQL engine and
# exports SWITCHBOARD_TEST_POSTGRES_URL, the URL of a superuser that may create a database per test, and
# SWITCHBOARD_TEST_POSTGRES_CA, the CA of the server's TLS certificate. The
# cluster lives in a temporary directory, listens on 127.0.0.1 on a free port, and is stopped and removed
# when the sourcing shell exits. Debian's `postgresql` package is installed when no server is found and
# apt is usable (root). With SWITCHBOARD_TEST_POSTGRES_URL already set, nothing is started: the tests use
# that server (and SWITCHBOARD_TEST_POSTGRES_CA, if it serves TLS).

postgres_bin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

start_test_postgres() {
  if [ -n "${SWITCHBOARD_TEST_POSTGRES_URL:-}" ]; then
    return
  fi
  if [ -z "$(postgres_bin)" ] && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "--- installing Debian's postgresql for the PostgreSQL engine's tests"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  fi
  local bin
  bin="$(postgres_bin)"
  if [ -z "$bin" ]; then
    echo "PostgreSQL is not installed: install Debian's postgresql package, or set SWITCHBOARD_TEST_POSTGRES_URL" >&2
    exit 1
  fi
  PG_TEST_DIR="$(mktemp -d /tmp/switchboard-postgres.XXXXXX)"
  # initdb and the server refuse to run as root: as root they run as the package's `postgres` user.
  local as=()
  if [ "$(id -u)" = "0" ]; then
    chown postgres "$PG_TEST_DIR"
    as=(runuser -u postgres --)
  fi
  if ! command -v openssl >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null
  fi
  # A port nothing listens on (bash's /dev/tcp connects, or fails when the port is free).
  local port=""
  for candidate in $(shuf -i 20000-60000 -n 50); do
    if ! (echo >"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then
      port="$candidate"
      break
    fi
  done
  if [ -z "$port" ]; then
    echo "no free port found for PostgreSQL" >&2
    exit 1
  fi
  "${as[@]}" "$bin/initdb" -D "$PG_TEST_DIR/data" -U switchboard --auth=trust --no-sync >/dev/null
  # TLS as a managed database serves it: a certificate for 127.0.0.1 signed by a CA of the cluster's own,
  # which the tests of `sslmode=require` name as `[storage] ca_file`.
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=switchboard-test-ca \
    -keyout "$PG_TEST_DIR/ca.key" -out "$PG_TEST_DIR/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 \
    -keyout "$PG_TEST_DIR/server.key" -out "$PG_TEST_DIR/server.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > "$PG_TEST_DIR/san.ext"
  openssl x509 -req -in "$PG_TEST_DIR/server.csr" -CA "$PG_TEST_DIR/ca.crt" -CAkey "$PG_TEST_DIR/ca.key" \
    -CAcreateserial -days 2 -extfile "$PG_TEST_DIR/san.ext" -out "$PG_TEST_DIR/server.crt" 2>/dev/null
  chmod 600 "$PG_TEST_DIR/server.key"
  if [ "$(id -u)" = "0" ]; then
    chown postgres "$PG_TEST_DIR/server.key" "$PG_TEST_DIR/server.crt"
  fi
  "${as[@]}" "$bin/pg_ctl" -D "$PG_TEST_DIR/data" -l "$PG_TEST_DIR/server.log" -w \
    -o "-p $port -k $PG_TEST_DIR -c listen_addresses=127.0.0.1 -c max_connections=400 -c ssl=on \
        -c ssl_cert_file=$PG_TEST_DIR/server.crt -c ssl_key_file=$PG_TEST_DIR/server.key" start >/dev/null
  trap stop_test_postgres EXIT
  # Plain by default (a loopback link); the TLS tests ask for `sslmode=require` themselves.
  export SWITCHBOARD_TEST_POSTGRES_URL="postgres://switchboard@127.0.0.1:$port/postgres?sslmode=disable"
  export SWITCHBOARD_TEST_POSTGRES_CA="$PG_TEST_DIR/ca.crt"
  echo "--- PostgreSQL $("$bin/postgres" --version | awk '{print $3}') for the tests at 127.0.0.1:$port"
}

# Stops the cluster in PG_TEST_DIR and removes it (scripts/bench-postgres.py calls it on its own cluster).
stop_test_postgres() {
  local as=()
  if [ "$(id -u)" = "0" ]; then
    as=(runuser -u postgres --)
  fi
  "${as[@]}" "$(postgres_bin)/pg_ctl" -D "$PG_TEST_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$PG_TEST_DIR"
}
