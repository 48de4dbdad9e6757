"""wildberries-sdk (OpenAPI-generated; each operation's host is fixed to
https://*.wildberries.ru) against the sandbox with no code change: the caller sets only the proxy
and CA variables (HTTPS_PROXY, SSL_CERT_FILE). Prints one JSON line per check.

The SDK picks the proxy by its configuration's default host; in 0.1.177 only the in-store
pickup module has one (the others have "" and bypass any proxy), so the checks use it.

usage: fixed_hosts.py KEY
"""
import json
import sys
import time

from wildberries_sdk import in_store_pickup as pickup
from wildberries_sdk.in_store_pickup.exceptions import ApiException


def check(name, ok, detail=""):
    print(json.dumps({"check": name, "ok": bool(ok), "detail": str(detail)[:300]}), flush=True)


def main():
    key = sys.argv[1]
    config = pickup.Configuration(api_key={"HeaderApiKey": key})
    check("wb-sdk proxy taken from the environment", config.proxy, config.proxy)
    api = pickup.DefaultApi(pickup.ApiClient(config))
    new = api.get_v3_click_collect_orders_new()
    check("wb-sdk new click-and-collect orders (marketplace-api.wildberries.ru)", new is not None, new)
    now = int(time.time())
    orders = api.get_v3_click_collect_orders(limit=10, next=0, date_from=now - 86400, date_to=now)
    check("wb-sdk click-and-collect orders", orders is not None, orders)
    # The bucket empties (300 per minute, 20 at once): WB's 429, raised as the library's own error.
    refused = None
    for _ in range(60):
        try:
            api.get_v3_click_collect_orders_new()
        except ApiException as e:
            refused = e
            break
    check(
        "wb-sdk rate-limit exceedance is the library's ApiException with status 429",
        refused is not None and refused.status == 429,
        refused and refused.status,
    )
    retry = refused is not None and refused.headers and refused.headers.get("X-Ratelimit-Retry")
    check("wb-sdk 429 carries X-Ratelimit-Retry", retry, refused and refused.headers)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - every failure is a failed check
        check("wb-sdk unexpected error", False, repr(e))
        sys.exit(1)
