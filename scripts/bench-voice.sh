#!/usr/bin/env bash
# Measures real-call throughput and crash safety against the fake Retell (tests/api/fakes/retell.rs):
# 1,000 production requests at max_concurrent_calls 20 and 200 (calls per second placed, time until every
# request is terminal, server RSS), and platform creates per attempt across a run with five kill -9s.
# Not part of CI. Usage: scripts/bench-voice.sh [--release]
set -euo pipefail
cd "$(dirname "$0")/.."
profile=()
if [[ "${1:-}" == "--release" ]]; then profile=(--release); fi
cargo test "${profile[@]}" --test api voice_bench -- --ignored --nocapture --test-threads=1 2>&1 | grep -oE 'BENCH.*|kill -9 #.*|test result.*|panicked.*'
