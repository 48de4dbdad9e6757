#!/usr/bin/env bash
# A fleet of one account on one Redis (issue 42's acceptance): two `apistend proxy` processes,
# each fed by `apistend load --no-limiter` (naive workers), and two `apistend load` processes
# (Rust clients), all believing WB's content group is 5 tokens, one per 200 ms, against a
# sandbox that allows 2, one per 400 ms (`--strict`, the default) or the same 5 / 200 ms
# (`--correct`). Reports, per run: the sandbox's answers allowed and refused (429), the share of
# the sandbox's rate used, and the hypervisor's steal over the run.
#   scripts/bench-fleet.sh [--runs 3] [--secs 30] [--strict|--correct]
# Needs the release binary (BIN=, default target/release/apistend) and redis-server.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/apistend}
RUNS=3 SECS=30 MODE=strict
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=$2; shift 2 ;;
    --secs) SECS=$2; shift 2 ;;
    --strict) MODE=strict; shift ;;
    --correct) MODE=correct; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$BIN" ] || cargo build --release --locked -p apistend
command -v redis-server >/dev/null || { echo "redis-server is needed" >&2; exit 1; }

GROUP='content-api.kontent'
PATH_='/content/v2/object/all'
KEY=fleet-key
WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; echo "no answer at $1" >&2; exit 1; }
steal() { awk '/^cpu /{print $9}' /proc/stat; }
# The sandbox's WB answers of `status` (a Prometheus counter summed over its label sets).
answers() { curl -s "$1/metrics" | awk -v s="status=\"$2\"" 'index($0,"apistend_requests_total{service=\"wb\"")==1 && index($0,s) {n+=$NF} END {print n+0}'; }

printf '[wb.groups."%s"]\nburst = 5\ninterval_ms = 200\n' "$GROUP" > "$WORK/client.toml"
if [ "$MODE" = strict ]; then BURST=2 INTERVAL=400; else BURST=5 INTERVAL=200; fi
printf '[wb.groups."%s"]\nburst = %s\ninterval_ms = %s\n' "$GROUP" "$BURST" "$INTERVAL" > "$WORK/sandbox.toml"

for run in $(seq "$RUNS"); do
  PIDS=()
  RPORT=$(free_port)
  redis-server --port "$RPORT" --save '' --appendonly no --daemonize no > "$WORK/redis.log" 2>&1 &
  PIDS+=($!)
  REDIS="redis://127.0.0.1:$RPORT"
  SPORT=$(free_port)
  SANDBOX="http://127.0.0.1:$SPORT"
  "$BIN" serve --addr "127.0.0.1:$SPORT" --data "$WORK/data-$run" --demo-key "$KEY" \
    --overrides "$WORK/sandbox.toml" > "$WORK/sandbox.log" 2>&1 &
  PIDS+=($!)
  wait_for "$SANDBOX/healthz"
  PROXIES=()
  for _ in 1 2; do
    PPORT=$(free_port)
    "$BIN" proxy --listen "127.0.0.1:$PPORT" --service wb --service ozon --upstream "$SANDBOX" \
      --account fleet --store "$REDIS" --overrides "$WORK/client.toml" > "$WORK/proxy-$PPORT.log" 2>&1 &
    PIDS+=($!)
    PROXIES+=("http://127.0.0.1:$PPORT")
  done
  for p in "${PROXIES[@]}"; do wait_for "$p/healthz"; done
  s0=$(steal)
  t0=$(date +%s.%N)
  LOADS=()
  for p in "${PROXIES[@]}"; do
    "$BIN" load --target "$p" --service wb --path "$PATH_" --key "$KEY" --workers 4 \
      --duration "$SECS" --no-limiter --json > "$WORK/naive-$run-${#LOADS[@]}.json" 2>/dev/null &
    LOADS+=($!)
  done
  for i in 1 2; do
    "$BIN" load --target "$SANDBOX" --service wb --path "$PATH_" --key "$KEY" --workers 4 \
      --duration "$SECS" --store "$REDIS" --account fleet --overrides "$WORK/client.toml" \
      --json > "$WORK/client-$run-$i.json" 2>/dev/null &
    LOADS+=($!)
  done
  for l in "${LOADS[@]}"; do wait "$l" || true; done
  s1=$(steal)
  t1=$(date +%s.%N)
  ok=$(answers "$SANDBOX" 200)
  refused=$(answers "$SANDBOX" 429)
  # The sandbox's capacity over the run, from the first request to the last answer: its burst
  # and one token per interval.
  read -r took share < <(python3 -c "t = $t1 - $t0; print(f'{t:.1f} {$ok / ($BURST + t * 1000 / $INTERVAL):.3f}')")
  echo "run $run ($MODE, ${SECS}s of load, ${took}s in all): sandbox allowed $ok, refused $refused (429), share of its rate $share, steal $((s1 - s0)) ticks"
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
done
