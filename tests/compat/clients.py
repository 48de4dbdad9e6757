"""Unmodified popular client libraries of each emulated service, pointed at the sandbox by their
base URL only. Run by crates/cli/tests/client_libraries.rs; prints one JSON line per check and
exits non-zero on the first failure.

    python clients.py BASE_URL KEY
"""

import asyncio
import json
import sys
import time
from datetime import timedelta

BASE, KEY = sys.argv[1], sys.argv[2]


def report(name, ok, **details):
    print(json.dumps({"check": name, "ok": bool(ok), **details}, default=str), flush=True)
    if not ok:
        sys.exit(1)


def wildberries():
    """wildberries-api: its base_url option ("may be used for test circuits") is the only change:
    one base URL per WB host, the host named in the path as the sandbox takes it."""
    from wb_api.exception import AuthorizationError, InvalidResponseError
    from wb_api.sync_api import SyncAPI

    class SandboxURL:
        COMMON = f"{BASE}/wb/common-api"
        FEEDBACK = f"{BASE}/wb/feedbacks-api"
        CHAT = f"{BASE}/wb/buyer-chat-api"

    api = SyncAPI.build(token=KEY, base_url=SandboxURL)
    report("wb common ping", api.common.ping() is not None)
    unanswered = api.feedback.get_question_count_unanswered()
    report("wb unanswered questions, parsed by the library's model", unanswered is not None,
           answer=unanswered)
    report("wb new feedbacks and questions", api.feedback.check_new_feedbacks_questions() is not None)
    # /ping allows 3 requests per 30 s per host: the fourth to feedbacks-api is refused, and the
    # library reports it as the invalid response it is; common-api's bucket is its own.
    report("wb feedbacks ping", api.feedback.ping() is not None)
    api.feedback.ping()
    api.feedback.ping()
    try:
        api.feedback.ping()
        report("wb fourth ping in 30 s refused", False)
    except InvalidResponseError as e:
        report("wb fourth ping in 30 s refused", not isinstance(e, AuthorizationError), error=repr(e))
    report("wb common ping has its own bucket", api.common.ping() is not None)
    bad = SyncAPI.build(token="not-a-key", base_url=SandboxURL)
    try:
        bad.common.ping()
        report("wb unknown token refused", False)
    except AuthorizationError as e:
        report("wb unknown token refused", True, error=repr(e))


def apify():
    """apify-client: the official Python client; api_url is the only change."""
    from apify_client import ApifyClient

    client = ApifyClient(token=KEY, api_url=f"{BASE}/apify", max_retries=2)
    me = client.user("me").get()
    report("apify users/me, parsed by the client's model", me is not None, answer=me)
    ds = client.dataset("demo-dataset")
    items = ds.list_items(limit=3)
    report("apify dataset items", items is not None, count=getattr(items, "count", None))
    # What it writes into a key-value store it reads back as written: JSON of any kind, text.
    kv = client.key_value_store(f"compat-{time.time_ns()}")
    written = {"OUTPUT": {"items": [1, 2, 3], "ok": True}, "LIST": [1, "two", None], "NOTE": "plain text"}
    for key, value in written.items():
        kv.set_record(key, value)
    read = {key: (kv.get_record(key) or {}).get("value") for key in written}
    kv.delete_record("NOTE")
    report("apify key-value records written, read back and deleted",
           read == written and kv.get_record("NOTE") is None and kv.get_record("ELSE") is None, read=read)
    # Bytes of a media type of their own come back as the same bytes, with that type; the keys
    # list each record's size as sent.
    blob = bytes([0, 159, 146, 150, 255, 10])
    kv.set_record("BLOB", blob, content_type="application/octet-stream")
    got = kv.get_record("BLOB") or {}
    sizes = {k.key: k.size for k in kv.list_keys().items}
    report("apify a binary record read back as its bytes, listed with its size",
           got.get("value") == blob and got.get("content_type", "").startswith("application/octet-stream")
           and sizes.get("BLOB") == len(blob), content_type=got.get("content_type"), sizes=sizes)
    # A run moves READY -> RUNNING -> SUCCEEDED in its time (1 s): call() waits for it through
    # waitForFinish, which the sandbox holds until the run is done.
    run = client.actor("apistend~demo").call(run_input={"hello": "world"}, wait_duration=timedelta(seconds=20))
    report("apify actor call() waits for the run to succeed", run is not None and run.status == "SUCCEEDED",
           status=getattr(run, "status", None), finished=getattr(run, "finished_at", None))
    # A run stopped while it runs is ABORTED (POST /v2/actor-runs/{runId}/abort).
    started = client.actor("apistend~demo").start(run_input={"hello": "abort"})
    aborted = client.run(started.id).abort()
    report("apify run abort() stops a running run", aborted is not None and aborted.status == "ABORTED",
           status=getattr(aborted, "status", None))
    runs = client.actor("apistend~demo").runs().list()
    report("apify the actor's runs list it", run is not None and run.id in [r.id for r in runs.items],
           total=runs.total)
    # What it pushes, it reads back page by page.
    ds = client.dataset(f"compat-{time.time_ns()}")
    ds.push_items([{"n": i} for i in range(5)])
    pages = [ds.list_items(offset=offset, limit=2) for offset in (0, 2, 4)]
    seen = [i["n"] for p in pages for i in p.items]
    report("apify dataset items pushed and read back over 3 pages", seen == list(range(5))
           and all(p.total == 5 for p in pages), seen=seen)


def bitrix24():
    """fast-bitrix24: the popular Bitrix24 client; the webhook URL is the only change. It paces
    itself by Bitrix24's documented leaky bucket, so 60 calls run with no QUERY_LIMIT_EXCEEDED."""
    from fast_bitrix24 import Bitrix

    b = Bitrix(f"{BASE}/b24/rest/1/{KEY}/", verbose=False)
    fields = b.get_all("crm.deal.fields")
    report("b24 crm.deal.fields", isinstance(fields, dict) and fields, count=len(fields or {}))
    # What it writes, it reads back: 60 deals added in one go (batches of 50, which the library
    # may send together and put together in its own order), then listed page by page
    # (start/next/total: the sandbox starts with 3) and read back by id.
    t = time.monotonic()
    ids = b.call("crm.deal.add", [{"fields": {"TITLE": f"Deal {i}", "OPPORTUNITY": i}} for i in range(60)])
    listed = b.get_all("crm.deal.list")
    deals = b.call("crm.deal.get", [{"ID": i} for i in ids])
    report(
        "b24 60 crm.deal.add, listed and read back in one go, no limit error",
        len(set(ids)) == 60
        and len(listed) == 63
        and sorted(d["TITLE"] for d in deals) == sorted(f"Deal {i}" for i in range(60))
        and {int(d["ID"]) for d in deals} == set(ids),
        count=len(deals),
        listed=len(listed),
        seconds=round(time.monotonic() - t, 2),
    )
    # Updated and deleted in one go each, then read back: the renamed, and the list without the
    # deleted.
    b.call("crm.deal.update", [{"ID": i, "fields": {"TITLE": f"Renamed {i}"}} for i in ids[:10]])
    renamed = b.call("crm.deal.get", [{"ID": i} for i in ids[:10]])
    b.call("crm.deal.delete", [{"ID": i} for i in ids[10:20]])
    left = {int(d["ID"]) for d in b.get_all("crm.deal.list")}
    report(
        "b24 crm.deal.update and crm.deal.delete, read back",
        sorted(d["TITLE"] for d in renamed) == sorted(f"Renamed {i}" for i in ids[:10])
        and len(left) == 53 and not left & set(ids[10:20]) and set(ids[:10]) <= left,
        renamed=len(renamed),
        left=len(left),
    )


def ozon():
    """ozon-api: an async Ozon Seller client; its api_url is the only change. (Its retry policy
    waits 4 to 10 s between attempts on any error, so errors are not exercised here.)"""
    from ozon_api import OzonAPI
    from ozon_api.models.product_list import ProductListFilter, ProductListRequest

    async def run():
        async with OzonAPI(client_id="1", api_key=KEY) as api:
            api.api_url = f"{BASE}/ozon"
            request = ProductListRequest(filter=ProductListFilter(visibility="ALL"), limit=100)
            return await api.product_list(request)

    answer = asyncio.run(run())
    report(
        "ozon product list, parsed by the client's model",
        answer is not None and answer.result.total == len(answer.result.items),
        answer=answer,
    )
    ozon_import()


def ozon_import():
    """ozon-api through an import: products sent, the task polled until it says `imported`
    (each item), then the products listed by their offer ids with the ids the task gave; one
    archived (listed under ARCHIVED, not ALL) and unarchived."""
    from ozon_api import OzonAPI
    from ozon_api.models.product_archive import ProductArchiveRequest, ProductUnarchiveRequest
    from ozon_api.models.product_import import ProductImport, ProductImport_Item
    from ozon_api.models.product_import_info import ProductImportInfo
    from ozon_api.models.product_list import ProductListFilter, ProductListRequest

    offers = [f"compat-{time.time_ns()}-{i}" for i in range(3)]
    item = dict(
        attributes=[], barcode="4600000000001", description_category_id=17028922,
        new_description_category_id=0, color_image="", complex_attributes=[], depth=10,
        dimension_unit="mm", height=10, images=[], images360=[], name="Compat product",
        old_price="1100", pdf_list=[], price="1000", primary_image="", vat="0.2", weight=100,
        weight_unit="g", width=10,
    )

    async def run():
        async with OzonAPI(client_id="1", api_key=KEY) as api:
            api.api_url = f"{BASE}/ozon"
            items = [ProductImport_Item(offer_id=o, **item) for o in offers]
            # The library's model has no `type_id`, which the official description requires
            # of every item (and the sandbox refuses without it, as the description says): the
            # model's body with it, through the library's own request path.
            body = ProductImport(items=items).model_dump()
            for i in body["items"]:
                i["type_id"] = 970895715
            started = await api._request(method="post", api_version="v3", endpoint="product/import", json=body)
            task = started["result"]["task_id"]
            statuses = []
            for _ in range(40):
                info = await api.product_import_info(ProductImportInfo(task_id=task))
                statuses.append(sorted({i["status"] for i in info["result"]["items"]}))
                if statuses[-1] == ["imported"]:
                    break
                await asyncio.sleep(0.25)
            listed = await api.product_list(
                ProductListRequest(filter=ProductListFilter(offer_id=offers, visibility="ALL"), limit=100)
            )
            # The first archived: listed under ARCHIVED, not under ALL; then back.
            first = [i["product_id"] for i in info["result"]["items"]][:1]
            archived = await api.product_archive(ProductArchiveRequest(product_id=first))
            under = {}
            for visibility in ("ARCHIVED", "ALL"):
                page = await api.product_list(
                    ProductListRequest(filter=ProductListFilter(visibility=visibility), limit=1000)
                )
                under[visibility] = [i["product_id"] for i in page.result.items]
            back = await api.product_unarchive(ProductUnarchiveRequest(product_id=first))
            return info, statuses, listed, (first, archived, under, back)

    info, statuses, listed, (first, archived, under, back) = asyncio.run(run())
    made = {i["offer_id"]: i["product_id"] for i in info["result"]["items"]}
    shown = {i["offer_id"]: i["product_id"] for i in listed.result.items}
    report(
        "ozon import moves to imported and its products are listed",
        statuses[0] == ["pending"] and statuses[-1] == ["imported"] and shown == made and len(made) == 3,
        statuses=statuses[:1] + statuses[-1:], made=made, shown=shown,
    )
    report(
        "ozon product_archive and product_unarchive, listed by visibility",
        archived.result and back.result and first[0] in under["ARCHIVED"] and first[0] not in under["ALL"],
        first=first, under=under,
    )


if __name__ == "__main__":
    wanted = sys.argv[3:] or ["wildberries", "apify", "bitrix24", "ozon"]
    for name in wanted:
        globals()[name]()
