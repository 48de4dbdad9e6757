"""The management client and the fixtures on their own: a request sent with the standard
library, waited for and counted; limits, settings, objects and keys."""

import json
import threading
import time
import urllib.request

import apistend
from apistend import ApistendError


def send(url, key, body=None, method="GET"):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"X-Mock-Key": key, "X-Mock-Delay": "0",
                                              "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_the_bundled_binary_is_the_wheels_version():
    import subprocess

    out = subprocess.run([apistend.find_binary(), "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out.split()[-1] == apistend.__version__


def test_wait_count_and_clear(apistend_sandbox):
    url = apistend_sandbox.base_url("ozon") + "/v3/product/list"
    later = threading.Timer(0.3, send, (url, apistend_sandbox.key, {"filter": {}, "limit": 10},
                                        "POST"))
    later.start()
    started = time.monotonic()
    assert apistend_sandbox.wait_for_requests(1, timeout=5, service="ozon") == 1
    assert time.monotonic() - started >= 0.25
    later.join()
    (record,) = apistend_sandbox.requests(body_path="$.limit", body_value="10")
    assert record["response"]["status"] == 200
    apistend_sandbox.clear_requests()
    assert apistend_sandbox.count_requests() == 0
    try:
        apistend_sandbox.wait_for_requests(1, timeout=0.2)
    except ApistendError as e:
        assert "0 of 1" in str(e)
    else:
        raise AssertionError("the wait should have timed out")


def test_limits_settings_keys_and_objects(apistend, apistend_sandbox):
    group = next(s for s in apistend.services() if s["id"] == "ozon")["groups"][0]["id"]
    apistend_sandbox.set_limit("ozon", group, burst=3, interval_ms=1000)
    assert apistend_sandbox.refresh()["limits"][0]["burst"] == 3
    assert apistend_sandbox.set_limit("ozon", group, burst=4)["interval_ms"] == 1000
    apistend_sandbox.remove_limit("ozon", group)
    assert apistend_sandbox.refresh()["limits"] == []
    assert apistend_sandbox.update_settings(latency_ms=0)["latency_ms"] == 0
    fixed = apistend_sandbox.issue_key("suite-fixed-key-1")
    assert fixed in apistend_sandbox.refresh()["keys"]
    apistend_sandbox.revoke_key(fixed)
    assert fixed not in apistend_sandbox.refresh()["keys"]
    assert isinstance(apistend_sandbox.object_counts(), (dict, list))
    try:
        apistend.sandbox("sbx_nothing_here")
    except ApistendError as e:
        assert e.status == 404 and e.problem
    else:
        raise AssertionError("an unknown sandbox should be a 404")
