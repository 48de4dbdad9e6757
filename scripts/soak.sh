#!/usr/bin/env bash
# The soak of the shipped binary (BENCHMARKS.md, "Soak"): the release `apistend serve` pinned to
# core 0 under a steady mix — allowed, rejected, scenario and management-API requests over
# 10 000 keys — at half the driver's measured maximum for 30 minutes (the driver pinned to core
# 1). Every 10 s: the window's p50/p99 and the sandbox's resident set. Passes when the resident
# set stays within +10 % of its size at the end of the first minute and the p99 of the last 5
# minutes is at most 1.2x that of minutes 2-6; draws docs/plots/soak.svg.
#
#   scripts/soak.sh [MINUTES]          (default 30; at least 7)
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=${1:-30}
OUT=target/soak
mkdir -p "$OUT" docs/plots
cargo build --release --locked -q -p apistend -p apistend-bench
PIN=()
if taskset -c 1 true 2>/dev/null; then PIN=(taskset -c 1); fi
status=0
"${PIN[@]}" target/release/bench-soak --bin-dir target/release --minutes "$MINUTES" \
  --json "$OUT/report.json" --chart "$OUT/soak.chart.json" || status=$?
target/release/apistend plot --input "$OUT/soak.chart.json" --output docs/plots/soak.svg
echo "report: $OUT/report.json, plot: docs/plots/soak.svg"
exit "$status"
