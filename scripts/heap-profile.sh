#!/usr/bin/env bash
# What the sandbox's heap holds at idle (BENCHMARKS.md, "Start and footprint"): builds `apistend`
# with `--cfg apistend_heap_profile` (the system allocator instead of mimalloc, so heaptrack sees
# every allocation; line tables, no LTO) in target/heap, starts `serve` under heaptrack on a
# fresh data directory, waits for /healthz and IDLE seconds, stops it, and prints the peak heap
# and its largest consumers by the first frame of this workspace's code.
#   scripts/heap-profile.sh [IDLE_SECONDS]      (needs heaptrack: apt-get install heaptrack)
set -euo pipefail
cd "$(dirname "$0")/.."
IDLE=${1:-1}
command -v heaptrack >/dev/null || { echo "heaptrack is not installed (apt-get install heaptrack)" >&2; exit 2; }
RUSTFLAGS="--cfg apistend_heap_profile" CARGO_TARGET_DIR=target/heap \
  CARGO_PROFILE_RELEASE_DEBUG=line-tables-only CARGO_PROFILE_RELEASE_LTO=false \
  CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 cargo build --release --locked -q -p apistend
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
heaptrack -o "$work/heap" target/heap/release/apistend serve --addr "127.0.0.1:$port" \
  --data "$work/data" >/dev/null 2>&1 &
tracker=$!
for _ in $(seq 1 300); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
sleep "$IDLE"
pkill -INT -f "apistend serve --addr 127.0.0.1:$port" || true
wait "$tracker" || true
heaptrack_print -f "$work"/heap*.zst --print-peaks 1 --print-leaks 0 --print-allocators 0 \
  --print-temporary 0 --peak-limit 40 --merge-backtraces 0 2>/dev/null > "$work/peaks.txt"
grep -E "peak heap memory consumption" "$work/peaks.txt" || true
python3 - "$work/peaks.txt" <<'PY'
import re, sys
entries, cur, prev = [], None, ""
for line in open(sys.argv[1]):
    m = re.match(r"^([\d.]+[KMG]?B?) peak memory consumed over (\d+) calls from", line)
    if m:
        cur = [m.group(1), []]
        entries.append(cur)
        continue
    if cur is not None:
        at = re.match(r"\s+at (crates/\S+)", line)
        if at:
            cur[1].append(f"{prev} ({at.group(1)})")
        prev = line.strip()
for size, frames in entries[:25]:
    print(f"{size:>10}  {' <- '.join(frames[:2]) or '(outside the workspace)'}")
PY
