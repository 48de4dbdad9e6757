#!/usr/bin/env bash
# Python integrations through `apistend proxy`: four httpx processes through two proxies sharing
# one Redis, against a sandbox that allows 10 requests a second (5 at once), for 30 s (bounded).
#   scripts/bench-proxy.sh [SECONDS]
# Prints the workers' counts, the sandbox's 429s and the share of the sandbox's rate used.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
cargo build --release --locked -p apistend
bin=target/release/apistend
work=$(mktemp -d)
venv="$work/venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet "$(grep '^httpx==' tests/compat/requirements.txt)"
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
redis_port=$(port)
redis-server --port "$redis_port" --save '' --appendonly no --dir "$work" >/dev/null &
pids+=($!)
printf '[ozon.groups.client]\nburst = 5\ninterval_ms = 100\n' > "$work/quota.toml"
sandbox_port=$(port)
"$bin" serve --addr "127.0.0.1:$sandbox_port" --data "$work" --demo-key bench-key --overrides "$work/quota.toml" >/dev/null 2>&1 &
pids+=($!)
p1=$(port); p2=$(port)
for p in "$p1" "$p2"; do
  "$bin" proxy --listen "127.0.0.1:$p" --service ozon --upstream "http://127.0.0.1:$sandbox_port/ozon" \
    --account py-seller --store "redis://127.0.0.1:$redis_port" --overrides "$work/quota.toml" >/dev/null 2>&1 &
  pids+=($!)
done
for p in "$sandbox_port" "$p1" "$p2"; do
  for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$p/metrics" && break; sleep 0.1; done
done
result=$(timeout $((seconds + 60)) "$venv/bin/python" tests/compat/proxy_load.py "$seconds" 4 /v2/warehouse/list \
  "Client-Id: 1" "Api-Key: bench-key" "X-Mock-Delay: 0" "Content-Type: application/json" -- \
  "http://127.0.0.1:$p1" "http://127.0.0.1:$p2")
refused=$(curl -s "http://127.0.0.1:$sandbox_port/metrics" \
  | awk '/^apistend_requests_total\{service="ozon"/ && /status="429"/ {s += $2} END {print s + 0}')
echo "workers: $result"
echo "sandbox 429s: $refused"
python3 -c "import json,sys; r=json.loads(sys.argv[1]); print('share of the sandbox rate: %.3f' % (r['ok'] / (5 + 10 * r['seconds'])))" "$result"
