#!/usr/bin/env python3
"""The dashboard's reads at scale: 1 000 sandboxes, and one with 300 keys (about 100 000 buckets).

    apistend serve --addr 127.0.0.1:PORT --admin-token TOKEN --admin-per-second 100000 --data TMP
    scripts/bench-dashboard.py PORT TOKEN

Prints the median of five reads of each (milliseconds), on loopback, against a fresh data dir.
"""
import json, subprocess, sys, time, http.client
base_host, port, token = "127.0.0.1", int(sys.argv[1]), sys.argv[2]
H = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
def call(method, path, body=None):
    c = http.client.HTTPConnection(base_host, port, timeout=60)
    t = time.perf_counter()
    c.request(method, path, body=json.dumps(body) if body is not None else None, headers=H)
    r = c.getresponse(); data = r.read()
    return r.status, (time.perf_counter() - t) * 1000, data, r
for i in range(1000):
    call("POST", "/api/v1/sandboxes", {"name": f"shop-{i:04}"})
st, ms, data, r = call("POST", "/api/v1/sandboxes", {"name": "big"})
big = json.loads(data)["id"]
for i in range(299):
    call("POST", f"/api/v1/sandboxes/{big}/keys")
def best(method, path, n=5):
    times = []
    for _ in range(n):
        st, ms, data, r = call(method, path)
        times.append(ms)
    times.sort()
    return st, times[len(times)//2], len(data)
print("list page of 50 of 1001:", best("GET", "/api/v1/sandboxes?limit=50&offset=500"))
print("list filtered q=shop-09:", best("GET", "/api/v1/sandboxes?q=shop-09&limit=50"))
print("buckets all=true page of 50 (offset 0):", best("GET", f"/api/v1/sandboxes/{big}/buckets?all=true&limit=50"))
print("buckets all=true page of 50 (offset 90000):", best("GET", f"/api/v1/sandboxes/{big}/buckets?all=true&limit=50&offset=90000"))
st, ms, data, r = call("GET", f"/api/v1/sandboxes/{big}/buckets?all=true")
print("all buckets of big:", st, f"{ms:.0f} ms", len(json.loads(data)), "buckets")
# The feed: time to the first `buckets` event, at offset 0 and far in.
for off in (0, 90000):
    c = http.client.HTTPConnection(base_host, port, timeout=60)
    t = time.perf_counter()
    c.request("GET", f"/api/v1/sandboxes/{big}/events?limit=50&offset={off}&interval_ms=1000", headers=H)
    r = c.getresponse(); buf = b""
    while b"event: buckets" not in buf or b"\n\n" not in buf.split(b"event: buckets", 1)[1]:
        buf += r.read1(65536)
    print(f"feed first buckets event (offset {off}): {(time.perf_counter()-t)*1000:.0f} ms")
    c.close()
