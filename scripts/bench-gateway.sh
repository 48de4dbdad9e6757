#!/usr/bin/env bash
# The gateway benchmark of the shipped binary: builds the release `apistend` and the hello-world
# anchor, installs wrk when missing, and runs alternating rounds (servers on core 0, wrk on core 1).
# With Redis, a memory-backed sandbox is measured in the same rounds as a second anchor.
#   scripts/bench-gateway.sh [--rounds 5] [--seconds 5] [--backing memory|redis|redis-cluster] [--json FILE] [-- SERVE ARGS]
# Loopback only; every run is bounded by --seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v wrk >/dev/null 2>&1; then
  echo "installing wrk"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
  }
fi
cargo build --release --locked -p apistend -p apistend-bench
exec target/release/bench-gateway --bin-dir target/release "$@"
