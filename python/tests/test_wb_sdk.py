"""wildberries-sdk, unmodified (its hosts are fixed to https://*.wildberries.ru), against the
sandbox with the plugin's fixtures alone: the proxy and CA variables send it there."""

import time

import pytest
from wildberries_sdk import in_store_pickup as pickup
from wildberries_sdk.in_store_pickup.exceptions import ApiException


def api_for(key):
    # The SDK reads the proxy from the environment when its configuration is made.
    config = pickup.Configuration(api_key={"HeaderApiKey": key})
    return pickup.DefaultApi(pickup.ApiClient(config))


def narrow(sandbox, api, burst):
    """One call finds the operation's limit group in the journal; the group is then narrowed
    to ``burst`` a minute and refilled. The operation's record."""
    api.get_v3_click_collect_orders_new()
    (record,) = sandbox.requests()
    sandbox.set_limit("wb", record["group"], burst=burst, interval_ms=60_000)
    sandbox.reset_buckets()
    sandbox.clear_requests()
    return record


def test_an_exhausted_limit_is_the_librarys_own_429(apistend_sandbox, apistend_proxy_env):
    api = api_for(apistend_sandbox.key)
    record = narrow(apistend_sandbox, api, burst=2)
    assert record["operation"] == "GET /api/v3/click-collect/orders/new"
    assert record["request"]["headers"]["authorization"] != apistend_sandbox.key  # masked

    api.get_v3_click_collect_orders_new()
    api.get_v3_click_collect_orders_new()
    with pytest.raises(ApiException) as refused:
        api.get_v3_click_collect_orders_new()

    assert refused.value.status == 429
    assert int(refused.value.headers["X-Ratelimit-Retry"]) >= 29
    bucket = apistend_sandbox.bucket("wb", record["group"])
    assert bucket["remaining"] == 0 and bucket["limit"] == 2
    assert apistend_sandbox.count_requests(operation=record["operation"]) == 3
    assert apistend_sandbox.count_requests(status=429, refused="limit") == 1
    # Refused once and never retried: nothing to hold against the client.
    report = apistend_sandbox.assert_clean_conduct()
    (group,) = report["keys"][0]["groups"]
    assert group["refused"] == 1 and group["early_retries"] == 0


def test_a_client_that_retries_at_once_is_told_apart(apistend_sandbox, apistend_proxy_env):
    api = api_for(apistend_sandbox.key)
    narrow(apistend_sandbox, api, burst=1)
    api.get_v3_click_collect_orders_new()
    refusals = 0
    for _ in range(4):  # a naive loop: again at once, though WB said to wait 60 s
        try:
            api.get_v3_click_collect_orders_new()
        except ApiException as e:
            assert e.status == 429
            refusals += 1
        time.sleep(0.3)  # past the 250 ms a request may have been in flight when it was refused
    assert refusals == 4

    report = apistend_sandbox.conduct()
    assert report["verdict"] == "violations"
    (group,) = report["keys"][0]["groups"]
    assert group["early_retries"] == 3
    assert group["longest_refusal_run"] == 4
    assert any("before the announced wait had passed" in r for r in report["reasons"])
