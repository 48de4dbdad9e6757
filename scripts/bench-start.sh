#!/usr/bin/env bash
# Start and footprint of the shipped binary: builds the release `apistend` and the hello-world
# anchor, then starts each --rounds times in alternation (pinned to core 0): time from spawn to
# the first answer, and resident memory after a short idle.
#   scripts/bench-start.sh [--rounds 10] [--idle-ms 500] [--against DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p apistend -p apistend-bench
exec target/release/bench-start --bin-dir target/release "$@"
