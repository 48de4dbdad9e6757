#!/usr/bin/env bash
# User-space instructions per request of the shipped binary and of the hello-world anchor, counted
# by callgrind (BENCHMARKS.md, "Instructions per request"). Unlike the rates of bench-gateway.sh,
# these counts do not move with what else the machine is doing, so a change of a few percent is
# seen in one run: use it for an A/B of two builds (BIN=path/to/other/apistend).
# Kernel time is not counted (callgrind sees user space only).
#
#   scripts/bench-instructions.sh [SECONDS]     (default 8: the measured load of each path)
# Loopback only; every load is bounded by SECONDS. Needs valgrind and wrk.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-8}
for tool in valgrind callgrind_control wrk curl python3; do
  command -v "$tool" >/dev/null || { echo "bench-instructions: $tool is missing" >&2; exit 2; }
done
if [[ -z "${BIN:-}" ]]; then
  cargo build --release --locked -q -p apistend -p apistend-bench
  BIN=target/release/apistend
fi
HELLO=target/release/apistend-hello
WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
TOKEN=bench-token-0123456789abcdef

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_up() {
  for _ in $(seq 600); do curl -s -o /dev/null "$1" && return 0; sleep 0.2; done
  echo "bench-instructions: $1 did not come up" >&2; exit 1
}

# count NAME URL [HEADER]: a 2 s warm-up, counters zeroed, SECONDS of wrk -c8, counters dumped.
count() {
  local name=$1 url=$2 header=${3:-X-Bench: 1} n file ir
  wrk -t1 -c8 -d2s -H "$header" "$url" >/dev/null
  callgrind_control -z "$VPID" >/dev/null 2>&1
  n=$(wrk -t1 -c8 -d"${SECONDS_EACH}"s -H "$header" "$url" | awk '/requests in/{print $1}')
  callgrind_control -d "$VPID" >/dev/null 2>&1
  sleep 1
  file=$(ls -t "$OUTDIR"/cg.out.* | head -1)
  ir=$(awk '/^(summary|totals):/{print $2; exit}' "$file")
  printf '%-9s %8d requests  %7d instructions a request\n' "$name" "$n" $((ir / n))
}

# The hello-world.
PORT=$(free_port); OUTDIR=$WORK/hello; mkdir -p "$OUTDIR"
valgrind --tool=callgrind --callgrind-out-file="$OUTDIR/cg.out" "$HELLO" "127.0.0.1:$PORT" \
  >"$OUTDIR/log" 2>&1 &
VPID=$!; PIDS+=("$VPID")
wait_up "http://127.0.0.1:$PORT/"
count hello "http://127.0.0.1:$PORT/"

# The sandbox, set up as bench-gateway sets it up, one callgrind process per path.
for path in allowed rejected; do
  PORT=$(free_port); OUTDIR=$WORK/$path; mkdir -p "$OUTDIR"
  valgrind --tool=callgrind --callgrind-out-file="$OUTDIR/cg.out" "$BIN" serve \
    --addr "127.0.0.1:$PORT" --admin-token "$TOKEN" --data "$OUTDIR/data" >"$OUTDIR/log" 2>&1 &
  VPID=$!; PIDS+=("$VPID")
  BASE=http://127.0.0.1:$PORT
  wait_up "$BASE/healthz"
  api() { curl -sf -X "$1" -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d "$3" "$BASE/api/v1$2"; }
  CREATED=$(api POST /sandboxes '{"name":"instructions"}')
  ID=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' <<<"$CREATED")
  KEY=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["keys"][0])' <<<"$CREATED")
  api PUT "/sandboxes/$ID/limits/wb/marketplace-api.skladov-prodavtsa" '{"burst":1000000,"per_second":1000000}' >/dev/null
  api PUT "/sandboxes/$ID/limits/wb/common-api.get.api-v1-seller-info" '{"burst":1,"interval_ms":3600000}' >/dev/null
  api PUT "/sandboxes/$ID/settings" '{"latency_ms":0}' >/dev/null
  case $path in
    allowed) count allowed "$BASE/wb/api/v3/warehouses" "Authorization: $KEY" ;;
    rejected) count rejected "$BASE/wb/api/v1/seller-info" "Authorization: $KEY" ;;
  esac
done
