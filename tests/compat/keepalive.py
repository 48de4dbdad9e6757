"""A pooled aiohttp client against the sandbox: early answers (an exhausted bucket's 429, the
management API's 401) to POSTs whose bodies arrive in a second write, then every pooled
connection reused after 20 s idle. Prints one JSON object: errors, new connections, statuses.

    python keepalive.py BASE KEY ADMIN_TOKEN [IDLE_SECONDS]
"""
import asyncio
import json
import sys

import aiohttp

BASE, KEY, ADMIN = sys.argv[1], sys.argv[2], sys.argv[3]
IDLE = float(sys.argv[4]) if len(sys.argv) > 4 else 20.0
CONCURRENT = 50


async def body():
    # ~3 KB in two writes: the answer may be ready before the second one arrives.
    yield b'{"filter": {"visibility": "ALL"}, "padding": "' + b"x" * 1500
    await asyncio.sleep(0.05)
    yield b"y" * 1500 + b'"}'


async def main():
    stats = {"new_connections": 0, "reused": 0}

    async def created(session, ctx, params):
        stats["new_connections"] += 1

    async def reused(session, ctx, params):
        stats["reused"] += 1

    trace = aiohttp.TraceConfig()
    trace.on_connection_create_end.append(created)
    trace.on_connection_reuseconn.append(reused)
    # The client keeps idle connections 60 s (aiohttp's default is 15 s); the server must too.
    connector = aiohttp.TCPConnector(limit=CONCURRENT, keepalive_timeout=60)
    async with aiohttp.ClientSession(connector=connector, trace_configs=[trace]) as s:
        async with s.get(f"{BASE}/api/v1/sandboxes", headers={"Authorization": f"Bearer {ADMIN}"}) as r:
            demo = next(x for x in await r.json() if KEY in x["keys"])
        async with s.put(
            f"{BASE}/api/v1/sandboxes/{demo['id']}/limits/ozon/client",
            headers={"Authorization": f"Bearer {ADMIN}"},
            json={"burst": 1, "interval_ms": 3600000},
        ) as r:
            assert r.status == 200, r.status
        ozon = {"Client-Id": "1", "Api-Key": KEY, "X-Mock-Delay": "0", "Content-Type": "application/json"}
        async with s.post(f"{BASE}/ozon/v3/product/list", headers=ozon, json={}) as r:
            await r.read()  # the bucket's only token

        async def one(url, headers):
            try:
                async with s.post(url, headers=headers, data=body()) as r:
                    await r.read()
                    return r.status
            except Exception as e:  # a disconnect is what this test looks for
                return f"{type(e).__name__}: {e}"

        async def batch():
            calls = [one(f"{BASE}/ozon/v3/product/list", ozon) for _ in range(CONCURRENT)]
            calls += [one(f"{BASE}/api/v1/sandboxes", {"Content-Type": "application/json"}) for _ in range(CONCURRENT)]
            return await asyncio.gather(*calls)

        first = await batch()
        before = stats["new_connections"]
        await asyncio.sleep(IDLE)
        second = await batch()
        statuses = {}
        errors = []
        for x in first + second:
            if isinstance(x, int):
                statuses[str(x)] = statuses.get(str(x), 0) + 1
            else:
                errors.append(x)
        print(json.dumps({
            "errors": errors,
            "statuses": statuses,
            "connections_before_idle": before,
            "new_connections_after_idle": stats["new_connections"] - before,
            "reused": stats["reused"],
        }))


asyncio.run(main())
