"""wildberries-sdk (OpenAPI-generated; each operation's host is fixed to
https://*.wildberries.ru) against the sandbox with no code change: the caller sets only the proxy
and CA variables (HTTPS_PROXY, SSL_CERT_FILE). Prints one JSON line per check.

The SDK decides on a proxy by its configuration's host: the in-store pickup module has an https
one, so HTTPS_PROXY applies; the items module (cards, prices, stocks) has none and bypasses every
proxy until it is given one (its `host` option: any https URL, each operation still calls its
own WB host) — configuration, as for any proxy, not a change to the library. Its flows are WB's own: cards uploaded then paged through with the list's cursor, updated and
moved to the trash; a price upload polled through its statuses; stocks written then read.

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


def patient(call, *args, **kwargs):
    """`call`, again after WB's 429 once its X-Ratelimit-Retry has passed (as an integration
    should): the sandbox keeps WB's own limits (cards/upload: 10 a minute, 5 at once)."""
    from wildberries_sdk.items.exceptions import ApiException as ItemsError

    for _ in range(20):
        try:
            return call(*args, **kwargs)
        except ItemsError as e:
            if e.status != 429:
                raise
            time.sleep(float((e.headers or {}).get("X-Ratelimit-Retry", "1")) + 0.05)
    raise RuntimeError("still refused after 20 waits")


def items_flows(key):
    from wildberries_sdk import items

    M = items.models
    config = items.Configuration(host="https://content-api.wildberries.ru",
                                 api_key={"HeaderApiKey": key})
    check("wb-sdk items: proxy taken from the environment", config.proxy, config.proxy)
    api = items.DefaultApi(items.ApiClient(config))
    run = f"sdk-{int(time.time() * 1000)}"
    # Five cards in one upload: one item with five variants (each variant is a card).
    upload = [M.PostV2CardsUploadRequestInner.from_dict({
        "subjectID": 105,
        "variants": [
            {"vendorCode": f"{run}-{i}", "title": f"Card {i}", "description": "made by the SDK",
             "brand": "APIStend", "dimensions": {"length": 10, "width": 10, "height": 10,
                                                  "weightBrutto": 1},
             "sizes": [{"techSize": "0", "wbSize": "", "price": 1000 + i, "skus": [f"{run}{i}"]}]}
            for i in range(5)
        ],
    })]
    done = patient(api.post_v2_cards_upload, upload)
    check("wb-sdk cards uploaded", done is not None and not done.error, done)
    # Paged by the cursor, 2 a page: the five cards (and the sandbox's own examples) over at
    # least three pages; the last page is shorter than its limit.
    seen, cursor, pages = {}, {"limit": 2}, 0
    while pages < 20:
        page = patient(api.post_v2_get_cards_list, M.PostV2GetCardsListRequest.from_dict(
            {"settings": {"cursor": cursor, "filter": {"withPhoto": -1}}}))
        pages += 1
        for card in page.cards or []:
            seen[card.vendor_code] = card
        if page.cursor.total < 2:
            break
        cursor = {"limit": 2, "nmID": page.cursor.nm_id, "updatedAt": page.cursor.updated_at}
    ours = {v: c for v, c in seen.items() if v.startswith(run)}
    check("wb-sdk the cards read back over pages of the cursor",
          pages >= 3 and len(ours) == 5 and ours[f"{run}-3"].title == "Card 3",
          f"{pages} pages, {sorted(ours)}")
    first = ours[f"{run}-0"]
    patient(api.post_v2_cards_update, [M.PostV2CardsUpdateRequestInner.from_dict({
        "nmID": first.nm_id, "vendorCode": first.vendor_code, "title": "Renamed by the SDK",
        "sizes": [{"techSize": "0", "wbSize": "", "skus": [f"{run}0"]}]})])
    found = patient(api.post_v2_get_cards_list, M.PostV2GetCardsListRequest.from_dict(
        {"settings": {"cursor": {"limit": 10}, "filter": {"textSearch": first.vendor_code,
                                                          "withPhoto": -1}}}))
    check("wb-sdk a card updated reads back updated",
          [c.title for c in found.cards or []] == ["Renamed by the SDK"], found.cards)
    patient(api.post_v2_cards_delete_trash,
            M.PostV2CardsDeleteTrashRequest.from_dict({"nmIDs": [first.nm_id]}))
    gone = patient(api.post_v2_get_cards_list, M.PostV2GetCardsListRequest.from_dict(
        {"settings": {"cursor": {"limit": 10}, "filter": {"textSearch": first.vendor_code,
                                                          "withPhoto": -1}}}))
    check("wb-sdk a card moved to the trash leaves the list", not gone.cards, gone.cards)

    # A price upload is a job: status 1 while processed, then 3.
    task = patient(api.post_v2_upload_task, M.PostV2UploadTaskRequest.from_dict(
        {"data": [{"nmID": c.nm_id, "price": 1500, "discount": 10} for c in ours.values()]}))
    upload_id = task.data.id
    statuses = []
    for _ in range(40):
        history = patient(api.get_v2_history_tasks, upload_id=upload_id)
        statuses.append(history.data.status)
        if history.data.status != 1:
            break
        time.sleep(0.25)
    check("wb-sdk a price upload moves from 1 to 3",
          statuses[0] == 1 and statuses[-1] == 3 and history.data.upload_id == upload_id,
          statuses)

    # Stocks written to a warehouse are read back from it.
    warehouse = 507
    patient(api.put_v3_stocks_warehouse_id, warehouse, M.PutV3StocksWarehouseIdRequest.from_dict(
        {"stocks": [{"chrtId": 900000 + i, "amount": 10 * i} for i in range(1, 4)]}))
    stocks = patient(api.post_v3_stocks_warehouse_id, warehouse,
                     M.PostV3StocksWarehouseIdRequest.from_dict({"chrtIds": [900002, 900003]}))
    amounts = sorted((s.chrt_id, s.amount) for s in stocks.stocks or [])
    check("wb-sdk stocks written are read back", amounts == [(900002, 20), (900003, 30)], amounts)


if __name__ == "__main__":
    try:
        main()
        items_flows(sys.argv[1])
    except Exception as e:  # noqa: BLE001 - every failure is a failed check
        check("wb-sdk unexpected error", False, repr(e))
        sys.exit(1)
