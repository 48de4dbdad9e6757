#!/usr/bin/env bash
# Regenerates every figure and plot of BENCHMARKS.md's "Evidence" part: the limit-utilization
# experiments of `apistend load` against a sandbox, and the sandbox's throughput against Prism
# (an OpenAPI mock server installed from npm) on the same WB spec. Loopback only; every run is
# bounded in time. Takes about 5 minutes on 2 cores.
#
#   scripts/bench.sh [SHARED_DIR]      (default ../shared, for the WB specs)
#
# Needs: cargo, python3, redis-server, wrk (apt-get install -y wrk), node + npm for Prism.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${1:-../shared}
OUT=target/bench-evidence
PLOTS=docs/plots
DUR=${BENCH_DURATION:-10}
mkdir -p "$OUT" "$PLOTS"
cargo build --release -q -p apistend
BIN=target/release/apistend
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 did not open" >&2; return 1; }

# The WB Content group: 5 requests at once, one back every 200 ms (5/s), in the sandbox and in
# the client's model alike. A stricter sandbox: 2 at once, one every 400 ms.
GROUP='[wb.groups."content-api.kontent"]'
printf '%s\nburst = 5\ninterval_ms = 200\n' "$GROUP" > "$OUT/quota.toml"
printf '%s\nburst = 2\ninterval_ms = 400\n' "$GROUP" > "$OUT/strict.toml"
printf '%s\nburst = 10\ninterval_ms = 100\n' "$GROUP" > "$OUT/generous.toml"
printf '%s\nburst = 1000000\nper_second = 1000000\n' "$GROUP" > "$OUT/unlimited.toml"
# One admin token for the sandboxes and for `apistend load`, which reads the quota each sandbox
# enforces from its management API (server_utilization).
export APISTEND_ADMIN_TOKEN=bench-admin-token-0123456789
# The decision record's first design counts "limit per period" in a fixed window: with WB's
# numbers written as "6 s | 30 requests | 200 ms | 5" that is 30 requests per 6 s window.
printf '%s\nburst = 30\ninterval_ms = 200\nalgorithm = "fixed_window"\n' "$GROUP" > "$OUT/fw.toml"

serve() { # port overrides [extra…]
  local port=$1 overrides=$2; shift 2
  "$BIN" serve --addr "127.0.0.1:$port" --data "$OUT/data-$port" --demo-key bench --overrides "$overrides" "$@" > "$OUT/serve-$port.log" 2>&1 &
  PIDS+=($!); wait_port "$port"
}
load() { # port key… extra args
  local port=$1; shift
  "$BIN" load --target "http://127.0.0.1:$port" --service wb --path /content/v2/object/all --key bench \
    --duration "$DUR" --overrides "${OVR:-$OUT/quota.toml}" --json "$@"
}

P1=$(free_port); serve "$P1" "$OUT/quota.toml"
echo "1. utilization against worker count (GCRA, memory store)"
: > "$OUT/workers.jsonl"
for w in 1 2 4 8 16 32; do
  load "$P1" --workers "$w" --account "w$w" | tee -a "$OUT/workers.jsonl"; sleep 1
done

echo "2. fixed window (the decision record's first design) against GCRA, 8 workers"
: > "$OUT/algorithms.jsonl"
load "$P1" --workers 8 --account a-gcra | tee -a "$OUT/algorithms.jsonl"; sleep 2
OVR="$OUT/fw.toml" load "$P1" --workers 8 --algorithm fixed-window --account a-fw | tee -a "$OUT/algorithms.jsonl"; sleep 2
load "$P1" --workers 8 --no-limiter --account raw | tee -a "$OUT/algorithms.jsonl"; sleep 1

echo "3. four instances: separate in-memory limiters against one shared Redis"
RP=$(free_port)
redis-server --port "$RP" --bind 127.0.0.1 --save '' --appendonly no > "$OUT/redis.log" 2>&1 &
PIDS+=($!); wait_port "$RP"
: > "$OUT/instances.jsonl"
load "$P1" --workers 8 --instances 4 --store memory --account i-mem | tee -a "$OUT/instances.jsonl"; sleep 1
load "$P1" --workers 8 --instances 4 --store "redis://127.0.0.1:$RP" --account i-redis | tee -a "$OUT/instances.jsonl"; sleep 1

echo "4. a sandbox stricter than the client's model, and one more generous (8 workers, 30 s)"
P2=$(free_port); serve "$P2" "$OUT/strict.toml"
: > "$OUT/strict.jsonl"
DUR=${BENCH_STRICT_DURATION:-30} load "$P2" --workers 8 --account strict --timeline "$OUT/timeline.jsonl" | tee -a "$OUT/strict.jsonl"
P4=$(free_port); serve "$P4" "$OUT/generous.toml"
DUR=${BENCH_STRICT_DURATION:-30} load "$P4" --workers 8 --account generous | tee -a "$OUT/strict.jsonl"
# MoySklad states its limit and window in its headers: a sandbox allowing 90 units per 3 s
# against the client's 45 (4 workers: MoySklad allows 5 requests in flight per user).
printf '[moysklad.groups.user]\nburst = 90\nper_second = 30\n' > "$OUT/ms-generous.toml"
P5=$(free_port); serve "$P5" "$OUT/ms-generous.toml"
"$BIN" load --target "http://127.0.0.1:$P5" --service moysklad --path /api/remap/1.2/entity/product --key bench \
  --duration "${BENCH_STRICT_DURATION:-30}" --workers 4 --account ms-generous --json | tee "$OUT/stated.jsonl"

echo "5. throughput: the sandbox against Prism on the same WB spec (02-products.yaml)"
P3=$(free_port); serve "$P3" "$OUT/unlimited.toml" --wb-openapi "$SHARED/wb-openapi"
PRISM="$OUT/prism/node_modules/.bin/prism"
if [ ! -x "$PRISM" ]; then npm install --silent --prefix "$OUT/prism" @stoplight/prism-cli@5 > "$OUT/npm.log" 2>&1 || true; fi
: > "$OUT/throughput.txt"
run_wrk() { taskset -c 1 wrk -t1 -c32 -d5s -H 'Authorization: bench' -H 'X-Mock-Delay: 0' "$1" | awk '/Requests\/sec/ {print $2}'; }
echo "sandbox $(run_wrk "http://127.0.0.1:$P3/wb/content/v2/object/all")" | tee -a "$OUT/throughput.txt"
if [ -x "$PRISM" ]; then
  PP=$(free_port)
  "$PRISM" mock -p "$PP" -h 127.0.0.1 "$SHARED/wb-openapi/02-products.yaml" > "$OUT/prism.log" 2>&1 &
  PIDS+=($!); wait_port "$PP"; sleep 1
  echo "prism $(run_wrk "http://127.0.0.1:$PP/content/v2/object/all")" | tee -a "$OUT/throughput.txt"
else
  echo "prism unavailable (npm install failed: see $OUT/npm.log)" | tee -a "$OUT/throughput.txt"
fi

echo "6. plots"
python3 - "$OUT" "$PLOTS" <<'PY'
import json, sys
out, plots = sys.argv[1], sys.argv[2]
rows = lambda f: [json.loads(l) for l in open(f"{out}/{f}") if l.strip()]
w = rows("workers.jsonl")
# One quantity per axis: utilization on the left, rejections on the right.
json.dump({"title": "GCRA client, memory store: utilization by workers", "x_label": "workers (concurrent)",
           "y_label": "utilization (achieved / allowed)", "y2_label": "server 429s per 100 successes",
           "kind": "line", "y_max": 1.1, "y2_max": 10, "series": [
               {"name": "utilization", "points": [[r["workers"], r["utilization"]] for r in w]},
               {"name": "429s per 100 ok", "axis": "right", "points": [[r["workers"], 100 * r["rejected"] / max(r["ok"], 1)] for r in w]}]},
          open(f"{out}/workers.chart.json", "w"))
a = rows("algorithms.jsonl")
names = ["GCRA", "fixed window", "no limiter"]
# Counts from tens to hundreds of thousands: a log scale.
json.dump({"title": "Answers in one 10 s run, 8 workers", "x_label": "client", "y_label": "answers (log scale)",
           "kind": "bar", "y_log": True, "labels": names, "series": [
               {"name": "server 429s", "points": [[i, r["rejected"]] for i, r in enumerate(a)]},
               {"name": "successes", "points": [[i, r["ok"]] for i, r in enumerate(a)]}]},
          open(f"{out}/algorithms.chart.json", "w"))
i = rows("instances.jsonl") + rows("strict.jsonl")
# Utilization against what the sandbox itself allows (its quota, from its management API).
json.dump({"title": "Four instances; sandboxes stricter and more generous than the client's model", "x_label": "setup",
           "y_label": "utilization (achieved / the sandbox's allowed)", "y2_label": "server 429s per 100 successes",
           "kind": "bar", "y_max": 1.1, "labels": ["4 x memory", "4 x Redis", "stricter sandbox", "more generous"], "series": [
               {"name": "utilization", "points": [[k, r["server_utilization"]] for k, r in enumerate(i)]},
               {"name": "429s per 100 ok", "axis": "right", "points": [[k, 100 * r["rejected"] / max(r["ok"], 1)] for k, r in enumerate(i)]}]},
          open(f"{out}/instances.chart.json", "w"))
t = [l.split() for l in open(f"{out}/throughput.txt") if len(l.split()) == 2]
try:
    json.dump({"title": "Requests per second on one WB operation (wrk -c32)", "x_label": "server", "y_label": "requests per second (log scale)",
               "kind": "bar", "y_log": True, "labels": [n for n, _ in t], "series": [{"name": "req/s", "points": [[k, float(v)] for k, (_, v) in enumerate(t)]}]},
              open(f"{out}/throughput.chart.json", "w"))
except ValueError:
    pass
tl = rows("timeline.jsonl")
json.dump({"title": "A sandbox stricter than the client believes, in time (8 workers)", "x_label": "time (s)",
           "y_label": "requests (cumulative)", "y2_label": "tokens left (the server's report)", "kind": "line",
           "y2_max": 3, "series": [
               {"name": "sent", "markers": False, "points": [[r["t_s"], r["sent"]] for r in tl]},
               {"name": "accepted", "markers": False, "points": [[r["t_s"], r["ok"]] for r in tl]},
               {"name": "refused (429)", "markers": False, "points": [[r["t_s"], r["rejected"]] for r in tl]},
               {"name": "bucket level", "axis": "right", "markers": False,
                "points": [[r["t_s"], r["remaining"]] for r in tl if r["remaining"] is not None]}]},
          open(f"{out}/timeline.chart.json", "w"))
PY
for c in workers algorithms instances throughput timeline; do
  [ -f "$OUT/$c.chart.json" ] && "$BIN" plot --input "$OUT/$c.chart.json" --output "$PLOTS/$c.svg"
done
echo "results in $OUT, plots in $PLOTS"
