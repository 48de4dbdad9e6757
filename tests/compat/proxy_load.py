"""Python integrations through `apistend proxy`: N worker processes, each an httpx client,
spread over the given proxies, calling one operation for a bounded time. Prints one JSON line:
{"sent", "ok", "rate_limited", "other", "seconds", "waited_ms_max"}.

usage: proxy_load.py SECONDS WORKERS PATH HEADER... -- PROXY_URL...
"""
import json
import multiprocessing
import sys
import time

import httpx


def worker(args):
    url, headers, seconds = args
    counts = {"sent": 0, "ok": 0, "rate_limited": 0, "other": 0, "waited_ms_max": 0}
    end = time.monotonic() + seconds
    with httpx.Client(timeout=30.0) as client:  # one pooled connection per worker, as apps do
        while time.monotonic() < end:
            # Ozon's warehouse list as its description has it: `limit` is required.
            r = client.post(url, headers=headers, content=b'{"limit": 50}')
            counts["sent"] += 1
            if r.status_code == 200:
                counts["ok"] += 1
            elif r.status_code == 429:
                counts["rate_limited"] += 1
            else:
                counts["other"] += 1
            waited = int(r.headers.get("x-apistend-waited-ms", "0"))
            counts["waited_ms_max"] = max(counts["waited_ms_max"], waited)
    return counts


def main():
    sep = sys.argv.index("--")
    seconds, workers, path = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    headers = dict(h.split(": ", 1) for h in sys.argv[4:sep])
    proxies = sys.argv[sep + 1:]
    jobs = [(f"{proxies[i % len(proxies)]}{path}", headers, seconds) for i in range(workers)]
    start = time.monotonic()
    with multiprocessing.Pool(workers) as pool:
        results = pool.map(worker, jobs)
    total = {k: sum(r[k] for r in results) for k in ("sent", "ok", "rate_limited", "other")}
    total["waited_ms_max"] = max(r["waited_ms_max"] for r in results)
    total["seconds"] = time.monotonic() - start
    print(json.dumps(total))


if __name__ == "__main__":
    main()
