#!/usr/bin/env bash
# User-space instructions per request of the shipped binary and of the hello-world anchor, counted
# by callgrind (BENCHMARKS.md, "Instructions per request"): `bench-gateway --instructions`, the
# gateway bench's own servers and set-up, each path in its own valgrind process. Unlike the rates
# of bench-gateway.sh, these counts do not move with what else the machine is doing, so a change of
# a few percent is seen in one run: for an A/B, run it with BIN_DIR= each build's directory.
# Kernel time is not counted (callgrind sees user space only).
#
#   scripts/bench-instructions.sh [SECONDS]     (default 8: the measured load of each path)
# Loopback only; every load is bounded by SECONDS. Installs valgrind and wrk when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-8}
for pkg in valgrind wrk; do
  if ! command -v "$pkg" >/dev/null 2>&1; then
    echo "installing $pkg"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null || {
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null
    }
  fi
done
cargo build --release --locked -q -p apistend -p apistend-bench
exec target/release/bench-gateway --instructions --bin-dir "${BIN_DIR:-target/release}" \
  --seconds "$SECONDS_EACH"
