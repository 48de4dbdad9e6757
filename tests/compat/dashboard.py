"""The dashboard (/ui) in a real headless Chromium, driven by Playwright.

    dashboard.py BASE_URL ADMIN_TOKEN CHROMIUM [SCREENSHOT_DIR]

Logs in (a wrong token first), makes a sandbox, sets its Bitrix24 limit from the page, sees the
bucket fall after requests, a refusal with the answer that was sent, the same refusal in the
request journal beside its request and the conduct report's verdict, the bucket refill, and
resets it with the page's button; sees an amoCRM key's lockout on its row, cleared by the reset,
a row shown after the traffic with the history the server kept, the limit form following the
filter with the sandbox's own limit, the drained buckets first with no filter (and not in catalog
order), and the objects the sandbox keeps counted, then reset. With SCREENSHOT_DIR, saves what a
person sees there.
Exits non-zero with a message at the first expectation that fails.
"""

import re
import sys
import time

import httpx
from playwright.sync_api import expect, sync_playwright

base, token, chromium = sys.argv[1], sys.argv[2], sys.argv[3]
shots = sys.argv[4] if len(sys.argv) > 4 else None
admin = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=10)

# Other sandboxes around, so that the list has something to filter.
for i in range(3):
    admin.post("/api/v1/sandboxes", json={"name": f"other-{i}"}).raise_for_status()
sb = admin.post("/api/v1/sandboxes", json={"name": "dashboard-check"}).json()
key = sb["keys"][0]


def call(n):
    """n Bitrix24 calls with the sandbox's key; their statuses."""
    out = []
    with httpx.Client(base_url=base, timeout=10) as c:
        for _ in range(n):
            r = c.post("/b24/rest/crm.deal.fields.json", headers={"X-Mock-Key": key, "X-Mock-Delay": "0"})
            out.append(r.status_code)
    return out


def seen(page):
    """What the page shows where the bucket should be: for the message of a failed expectation."""
    return page.evaluate(
        """() => ({
            url: location.href,
            app: !document.getElementById("app-view").hidden,
            live: document.getElementById("live").className,
            filter: ["f-service", "f-group", "f-key"].map((id) => document.getElementById(id).value),
            rows: [...document.querySelectorAll("#buckets tbody tr")].map((r) => r.dataset.bucket),
            note: document.getElementById("b-note").textContent,
            range: document.getElementById("b-range").textContent,
        })"""
    )


def remaining(page):
    row = page.locator(f'tr[data-bucket="{key}|b24|portal"]')
    try:
        expect(row).to_have_count(1, timeout=10_000)
    except AssertionError as e:
        raise SystemExit(f"no row for the bucket; the page shows {seen(page)}; errors {errors}; console {console[-10:]}") from e
    return int(row.get_attribute("data-remaining")), int(row.get_attribute("data-limit"))


def wait_for(page, what, test, seconds=15):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = remaining(page)
        if test(*got):
            return got
        page.wait_for_timeout(100)
    raise SystemExit(f"the page never showed {what}; last {remaining(page)}")


with sync_playwright() as p:
    browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # The live feeds the page has open: one at a time, or an old filter's page would be drawn over
    # the new one's.
    feeds = set()
    page.on("request", lambda r: "/events?" in r.url and feeds.add(r))
    page.on("requestfailed", lambda r: feeds.discard(r))
    page.on("requestfinished", lambda r: feeds.discard(r))
    console = []  # for the message of a failed expectation only (a refused token logs one too)
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    # The resets ask first; the test says yes (and counts that they asked).
    asked = []
    page.on("dialog", lambda d: (asked.append(d.message), d.accept()))
    page.goto(base + "/ui")
    # The login page has no log-out button.
    expect(page.locator("#logout")).to_be_hidden()

    if shots:
        page.screenshot(path=f"{shots}/dashboard-login.png")
    page.fill("#token", "not-the-token")
    page.click("#login button[type=submit]")
    expect(page.locator("#login-error")).to_contain_text("not accepted")
    page.fill("#token", token)
    page.click("#login button[type=submit]")
    expect(page.locator("#app-view")).to_be_visible()

    # Server-side filtering of the list, then the sandbox.
    page.fill("#search", "dashboard-check")
    expect(page.locator("#sandboxes li")).to_have_count(1)
    page.click("#sandboxes li")
    expect(page.locator("#sb-title")).to_contain_text("dashboard-check")

    # This sandbox's own limit, from the form: 4 requests, one back every 3 s (a full refill takes 9 s or more, a reset
    # is seen at once).
    page.select_option("#l-service", "b24")
    page.select_option("#l-group", "portal")
    page.fill("#l-burst", "4")
    page.fill("#l-interval", "3000")
    page.click("#limit-form button[type=submit]")
    expect(page.locator("#l-status")).to_contain_text("4 per 3000 ms")
    page.select_option("#f-service", "b24")
    page.select_option("#f-key", key)
    wait_for(page, "a full bucket of 4", lambda r, lim: lim == 4 and r == 4)
    page.wait_for_timeout(500)
    if len(feeds) != 1:
        raise SystemExit(f"the page keeps {len(feeds)} live feeds open: {[r.url for r in feeds]}")

    statuses = call(6)
    if statuses[:4] != [200] * 4 or all(s == 200 for s in statuses[4:]):
        raise SystemExit(f"expected 4 answers and then refusals, got {statuses}")
    wait_for(page, "the bucket fall", lambda r, lim: r <= 1)
    expect(page.locator("#refusals summary").first).to_contain_text("/b24/rest/crm.deal.fields.json")
    page.locator("#refusals summary").first.click()
    expect(page.locator("#refusals pre").first).to_contain_text("QUERY_LIMIT_EXCEEDED")
    expect(page.locator("#rates tbody tr")).not_to_have_count(0)

    # The request journal: the refusals, newest first; one opened shows the request and its answer
    # side by side (the key masked); the conduct report has seen a request sent before the wait a
    # refusal announced (one more, 200 ms after the refusals: past the time a request may have
    # been in flight, long before Bitrix24's pause).
    time.sleep(0.2)
    call(1)
    page.check("#r-refused")
    rows = page.locator("#requests tbody tr[data-id]")
    expect(rows.first).to_contain_text("/b24/rest/crm.deal.fields.json", timeout=10_000)
    expect(rows.first).to_contain_text("refused: limit")
    rows.first.click()
    expect(page.locator("#r-sent")).to_contain_text("POST /b24/rest/crm.deal.fields.json")
    expect(page.locator("#r-sent")).to_contain_text("x-mock-key: ***")
    if key in page.locator("#r-sent").inner_text():
        raise SystemExit("the journal shows the key unmasked in the request's headers")
    expect(page.locator("#r-answer")).to_contain_text("QUERY_LIMIT_EXCEEDED")
    expect(page.locator("#conduct")).to_contain_text("before the announced wait", timeout=10_000)
    page.uncheck("#r-refused")
    expect(rows.first).to_be_visible()

    # It refills by itself…
    low = remaining(page)[0]
    wait_for(page, "the bucket refill", lambda r, lim: r > low, seconds=10)
    # …and the reset button fills it at once.
    call(4)
    wait_for(page, "the bucket drained again", lambda r, lim: r <= 1)
    page.click("#reset-all")
    # Within 6 s: a refill from 1 to 4 takes 9 s, so only the reset can show it full this soon
    # (and 6 s leaves the feed's tick room on a loaded machine).
    wait_for(page, "the bucket reset to full", lambda r, lim: r == lim, seconds=6)

    # An amoCRM integration that keeps hammering is locked out: the page says so on its bucket's
    # row, and the reset clears it.
    with httpx.Client(base_url=base, timeout=10) as c:
        for _ in range(30):
            c.get("/amocrm/api/v4/leads", headers={"Authorization": f"Bearer {key}", "X-Mock-Delay": "0"})
        if c.get("/amocrm/api/v4/leads", headers={"Authorization": f"Bearer {key}", "X-Mock-Delay": "0"}).status_code != 403:
            raise SystemExit("the amoCRM key was not locked out")
    page.select_option("#f-service", "amocrm")
    locked = page.locator(f'tr[data-bucket="{key}|amocrm|integration"] .locked')
    expect(locked).to_contain_text("locked", timeout=10_000)
    # Its row appeared after the traffic (the page showed Bitrix24's buckets then), and it shows
    # what happened: the server kept the bucket's history, drained to nothing.
    amo = page.locator(f'tr[data-bucket="{key}|amocrm|integration"]')
    if int(amo.get_attribute("data-history")) < 3 or amo.get_attribute("data-history-low") != "0":
        raise SystemExit(
            f"a row shown after the traffic has no history: {amo.get_attribute('data-history')} points, "
            f"lowest {amo.get_attribute('data-history-low')}"
        )
    # The limit form follows the filter.
    expect(page.locator("#l-service")).to_have_value("amocrm")
    page.click("#reset-all")
    expect(locked).to_have_count(0, timeout=10_000)
    with httpx.Client(base_url=base, timeout=10) as c:
        r = c.get("/amocrm/api/v4/leads", headers={"Authorization": f"Bearer {key}", "X-Mock-Delay": "0"})
        if r.status_code != 200:
            raise SystemExit(f"the reset did not clear the lockout: {r.status_code}")
        # The objects it keeps, counted per collection: a lead made here shows beside the two
        # the sandbox starts with, and resetting the objects forgets them.
        made = c.post("/amocrm/api/v4/leads", headers={"Authorization": f"Bearer {key}", "X-Mock-Delay": "0"},
                      json=[{"name": "made by the dashboard check"}])
        if made.status_code != 200:
            raise SystemExit(f"a lead was not made: {made.status_code} {made.text[:200]}")
    page.click("#objects-refresh")
    expect(page.locator("#sb-objects")).to_contain_text("amocrm/leads: 3")
    page.click("#objects-reset")
    expect(page.locator("#sb-objects")).to_have_text("none")
    page.select_option("#f-service", "b24")
    # The limit form shows this sandbox's own limit of the group the filter chose.
    page.select_option("#f-group", "portal")
    expect(page.locator("#l-group")).to_have_value("portal")
    expect(page.locator("#l-burst")).to_have_value("4")
    expect(page.locator("#l-interval")).to_have_value("3000")
    expect(page.locator("#l-own")).to_contain_text("own limit")

    # With no filter, the buckets the traffic drained come first (of hundreds: every group of
    # every service); in catalog order they do not.
    call(5)
    page.select_option("#f-service", "")
    page.select_option("#f-key", "")
    first = page.locator("#buckets tbody tr").first
    expect(first).to_have_attribute("data-bucket", f"{key}|b24|portal", timeout=10_000)
    if int(first.get_attribute("data-remaining")) > 1:
        raise SystemExit(f"the first bucket is not the drained one: {seen(page)}")
    page.select_option("#f-order", "catalog")
    expect(first).not_to_have_attribute("data-bucket", f"{key}|b24|portal", timeout=10_000)
    page.select_option("#f-order", "activity")
    expect(first).to_have_attribute("data-bucket", f"{key}|b24|portal", timeout=10_000)

    # The defaults form keeps what it does not show.
    page.fill("#s-latency", "0")
    page.click("#settings-form button[type=submit]")
    expect(page.locator("#s-status")).to_have_text("saved")
    if shots:
        # Some more history on the charts: drained again, refilling.
        call(5)
        page.wait_for_timeout(4000)
        page.locator("#refusals summary").first.click()
        page.locator("#requests tbody tr[data-id]").first.click()
        page.screenshot(path=f"{shots}/dashboard.png", full_page=True)

    if len(asked) < 3:
        raise SystemExit(f"a reset did not ask first: {asked}")
    # Times on a 24-hour clock, whatever the browser's locale.
    shown = page.locator("#requests tbody tr[data-id] td.num").first.inner_text()
    if not re.fullmatch(r"\d\d:\d\d:\d\d\.\d\d\d", shown):
        raise SystemExit(f"a request's time is not a 24-hour clock: {shown!r}")
    # From 800 px up the page never scrolls sideways.
    page.set_viewport_size({"width": 800, "height": 900})
    page.wait_for_timeout(300)
    overflow = page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")
    if overflow > 0:
        raise SystemExit(f"at 800 px the page is {overflow} px wider than the window")

    if errors:
        raise SystemExit(f"the page threw: {errors}")
    browser.close()
print("dashboard: ok")
