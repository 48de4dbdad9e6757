"""Each service's rate-limit answer against what its official description documents: drains one
bucket of each service on a running sandbox (its limits set to one request a minute by the
caller) and compares the refusal with the documented one — the status, and the body field by
field: the same fields, each of the same JSON type, strings of the same format (a UUID, a number
written as text, a date) as the documented example, and valid against the documented schema where
there is one (openapi-schema-validator). Where a description contradicts itself (Ozon's example
writes `code` as a word where its schema declares an integer), the schema wins and the test says
so. Prints one JSON line per service {"service", "status", "ok", "problems"}; exits 1 if any is
not ok.

usage: rejections.py BASE_URL KEY SHARED_DIR
"""
import json
import os
import re
import sys
import urllib.error
import urllib.request

import yaml
from openapi_schema_validator import OAS30Validator, OAS31Validator

FORMATS = [
    ("uuid", re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)),
    ("date-time", re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d")),
    ("number", re.compile(r"^-?\d+(\.\d+)?$")),
]


def fmt(s):
    return next((name for name, rx in FORMATS if rx.match(s)), "text")


def kind(v):
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(v), "number")


def compare(doc, got, path, problems):
    """`got` has the documented example `doc`'s fields, types and string formats."""
    if kind(doc) != kind(got):
        problems.append(f"{path or '$'}: {kind(got)} where the description has {kind(doc)}")
        return
    if isinstance(doc, dict):
        for k in doc:
            if k not in got:
                problems.append(f"{path}.{k}: missing")
            else:
                compare(doc[k], got[k], f"{path}.{k}", problems)
        for k in got:
            if k not in doc:
                problems.append(f"{path}.{k}: not in the description")
    elif isinstance(doc, list) and doc and got:
        compare(doc[0], got[0], f"{path}[0]", problems)
    elif isinstance(doc, str) and fmt(doc) != fmt(got):
        problems.append(f"{path}: {got!r} is {fmt(got)} where the description has {fmt(doc)} ({doc!r})")


def deref(spec, node):
    while isinstance(node, dict) and "$ref" in node:
        cur = spec
        for part in node["$ref"][2:].split("/"):
            cur = cur[part]
        node = cur
    return node


def validator(spec, schema):
    cls = OAS31Validator if str(spec.get("openapi", "")).startswith("3.1") else OAS30Validator
    return cls({**schema, "components": spec.get("components", {})})


def send(url, headers, body=None, method="GET"):
    req = urllib.request.Request(url, data=body, method=method)
    # MoySklad refuses a request that does not accept gzip (415); urllib sends no
    # Accept-Encoding of its own, and the sandbox answers uncompressed.
    for k, v in {**headers, "X-Mock-Delay": "0", "Accept-Encoding": "gzip"}.items():
        req.add_header(k, v)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), dict(e.headers)


def refused(url, headers, body=None, method="GET"):
    """The answer of the third request in a row (a bucket of one: the second is refused)."""
    for _ in range(3):
        status, text, heads = send(url, headers, body, method)
    return status, text, heads


def main():
    base, key, shared = sys.argv[1], sys.argv[2], sys.argv[3]
    specs = os.path.join(shared, "specs")
    load = lambda p: (json.load if p.endswith(".json") else yaml.safe_load)(open(p, encoding="utf-8"))
    apify = load(os.path.join(specs, "apify/openapi.yaml"))
    ozon = load(os.path.join(specs, "ozon/seller-openapi.json"))
    ymarket = load(os.path.join(specs, "yandex-market/openapi.yaml"))
    wb = load(os.path.join(shared, "wb-openapi", "02-products.yaml"))
    ms_limits = load(os.path.join(specs, "moysklad/limits.json"))["rate_limit"]["on_exceed"]
    amo_limits = load(os.path.join(specs, "amocrm/limits.json"))["rate_limits"]["on_exceed"]
    b24_limit = next(e for e in load(os.path.join(specs, "b24/errors.json"))["system_errors"]["errors"]
                     if e.get("code") == "QUERY_LIMIT_EXCEEDED")

    def documented(spec, response):
        """The documented answer's schema and example (the schema's own, else none)."""
        r = deref(spec, response)
        media = r.get("content", {}).get("application/json", {})
        schema = deref(spec, media.get("schema", {}))
        example = media.get("example", schema.get("example"))
        return spec, schema, example

    cases = [
        # service, status, (schema, example) or a check of its own, url, headers, body, method
        ("wb", 429, documented(wb, wb["components"]["responses"]["429"]),
         f"{base}/wb/content-api/content/v2/object/all", {"Authorization": key}, None, "GET"),
        ("apify", 429, documented(apify, apify["components"]["responses"]["TooManyRequests"]),
         f"{base}/apify/v2/acts", {"Authorization": f"Bearer {key}"}, None, "GET"),
        ("ozon", 429, documented(ozon, ozon["paths"]["/v3/product/import"]["post"]["responses"]["429"]),
         f"{base}/ozon/v2/warehouse/list", {"Client-Id": "1", "Api-Key": key}, b"{}", "POST"),
        ("ymarket", 420, documented(ymarket, ymarket["components"]["responses"]["420"]),
         f"{base}/ymarket/v2/campaigns", {"Api-Key": key}, None, "GET"),
        ("moysklad", ms_limits["status"], None,
         f"{base}/moysklad/api/remap/1.2/entity/product", {"Authorization": f"Bearer {key}"}, None, "GET"),
        ("b24", b24_limit["status"], None,
         f"{base}/b24/rest/1/{key}/crm.deal.fields", {}, None, "POST"),
        ("amocrm", amo_limits["status"], None,
         f"{base}/amocrm/api/v4/leads", {"Authorization": f"Bearer {key}"}, None, "GET"),
    ]
    bad = 0
    for service, want, doc, url, headers, body, method in cases:
        status, text, heads = refused(url, headers, body, method)
        problems = []
        if status != want:
            problems.append(f"status {status}, documented {want}")
        if service == "moysklad":
            got = json.loads(text)
            err = got["errors"][0]
            if err.get("code") != ms_limits["error_code"] or err.get("error") != ms_limits["error_message"]:
                problems.append(f"{err} is not code {ms_limits['error_code']} {ms_limits['error_message']!r}")
        elif service == "b24":
            got = json.loads(text)
            if got.get("error") != b24_limit["code"]:
                problems.append(f"error {got.get('error')!r}, documented {b24_limit['code']!r}")
            if set(got) != {"error", "error_description"}:
                problems.append(f"fields {sorted(got)}, documented error and error_description")
        elif service == "amocrm":
            # Not JSON, and not empty: what the official SDK reads as "too many requests".
            try:
                json.loads(text)
                problems.append("a JSON body where amoCRM sends none")
            except ValueError:
                pass
            if not text.strip():
                problems.append("an empty body")
        else:
            spec, schema, example = doc
            got = json.loads(text)
            if schema:
                for e in validator(spec, schema).iter_errors(got):
                    problems.append(f"schema: {str(e).splitlines()[0]}")
            if example is not None:
                example_problems = []
                compare(example, got, "", example_problems)
                if service == "ozon":
                    # Its example's `code` is a word, its schema's an integer (gRPC's 8,
                    # RESOURCE_EXHAUSTED): the schema is what Ozon's gateway sends.
                    example_problems = [p for p in example_problems if not p.startswith(".code:")
                                        and not p.startswith(".details:")]
                problems += example_problems
        ok = not problems
        bad += not ok
        print(json.dumps({"service": service, "status": status, "ok": ok, "problems": problems,
                          "body": text[:300]}, ensure_ascii=False))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
