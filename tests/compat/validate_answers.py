"""Walks every operation of the services' official OpenAPI descriptions against a running
sandbox, sending what a client sends (path parameters, required query parameters and the
request body from the description's examples or schemas), and validates each answer against the
description: the status is a documented 2xx, the body is valid against that response's schema
(openapi-schema-validator, OpenAPI 3.0 or 3.1 rules). Prints one JSON line per service:
{"service", "operations", "valid", "invalid", "not_answered", "failures": [...first 20]}.

usage: validate_answers.py BASE_URL KEY SHARED_DIR [SERVICE...]
       validate_answers.py BASE_URL KEY --document PATH PREFIX
The second walks one user's OpenAPI document served at PREFIX (its key as a bearer token).
"""
import glob
import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

import yaml
from openapi_schema_validator import OAS30Validator, OAS31Validator

METHODS = ("get", "post", "put", "patch", "delete")


def deref(doc, node, depth=0):
    while isinstance(node, dict) and "$ref" in node and depth < 16:
        ref = node["$ref"]
        if not ref.startswith("#/"):
            return node
        cur = doc
        for part in ref[2:].split("/"):
            cur = cur.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(cur, dict) else {}
        node = cur
        depth += 1
    return node


def sample(doc, schema, depth=0):
    """A value for a parameter or body: its example, else the plainest of its type."""
    s = deref(doc, schema or {})
    for k in ("example", "default"):
        if k in s:
            return s[k]
    if "examples" in s and isinstance(s["examples"], list) and s["examples"]:
        return s["examples"][0]
    if "enum" in s and s["enum"]:
        return s["enum"][0]
    if depth > 12:
        return None
    for k in ("allOf", "oneOf", "anyOf"):
        if k in s and s[k]:
            if k == "allOf":
                out = {}
                for part in s[k]:
                    v = sample(doc, part, depth + 1)
                    if isinstance(v, dict):
                        out.update(v)
                # What the object requires of properties its parts declare (Yandex Market's
                # order item: `required: [price]` beside `allOf: [base, {properties: {price}}]`).
                for name in s.get("required", []):
                    for part in s[k]:
                        declared = deref(doc, part).get("properties", {})
                        if name not in out and name in declared:
                            out[name] = sample(doc, declared[name], depth + 1)
                return out
            first = deref(doc, s[k][0])
            if "properties" in s and not any(x in first for x in ("type", "properties", "$ref")):
                # Branches that only pick which of the object's own properties are required
                # (Ozon's `oneOf: [{required: [a]}, {required: [b]}]`): the object, with the
                # first branch's.
                merged = {kk: vv for kk, vv in s.items() if kk not in ("oneOf", "anyOf")}
                merged["required"] = list(s.get("required", [])) + list(first.get("required", []))
                return sample(doc, merged, depth + 1)
            return sample(doc, s[k][0], depth + 1)
    t = s.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "null")
    if t == "object" or "properties" in s:
        # Required: by the object's list, or (as Ozon writes it, Swagger 2's way) by the
        # property's own `required: true`.
        req = s.get("required", [])
        return {k: sample(doc, v, depth + 1) for k, v in s.get("properties", {}).items()
                if k in req or (isinstance(v, dict) and v.get("required") is True)}
    if t == "array":
        # As many items as the schema asks for at least.
        return [sample(doc, s.get("items", {}), depth + 1)] * max(1, s.get("minItems", 1))
    if t in ("integer", "number"):
        low = s.get("minimum", s.get("exclusiveMinimum", 1))
        return max(1, low if isinstance(low, (int, float)) and not isinstance(low, bool) else 1)
    if t == "boolean":
        return False
    if t == "string":
        if "pattern" in s:
            matching = matching_text(s["pattern"], s.get("minLength", 0), s.get("maxLength"))
            if matching is not None:
                return matching
        text = {"date-time": "2026-01-01T00:00:00Z", "date": "2026-01-01",
                "uuid": "3fa85f64-5717-4562-b3fc-2c963f66afa6",
                "email": "user@example.com"}.get(s.get("format"), "x")
        return text * max(1, -(-s.get("minLength", 1) // len(text)))
    return "x"


def break_discriminator_cycles(doc):
    """A discriminated base that its branches extend through `allOf` (MoySklad's
    `AttributeAbstract`, mapping `file` to `attributeFile`, which is `allOf: [AttributeAbstract]`)
    sends openapi-schema-validator into endless recursion: each branch re-applies the base's
    discriminator. OpenAPI means the branch to include the base's constraints, not to dispatch
    again, so inside each branch the reference to its base is replaced by the base without its
    discriminator. Nothing else changes."""
    schemas = (doc.get("components") or {}).get("schemas") or {}
    for name, base in list(schemas.items()):
        mapping = ((base or {}).get("discriminator") or {}).get("mapping") or {}
        ref = f"#/components/schemas/{name}"
        plain = {k: v for k, v in base.items() if k != "discriminator"}
        for target in mapping.values():
            branch = schemas.get(target.rsplit("/", 1)[-1]) if target.startswith("#/components/schemas/") else None
            for i, part in enumerate((branch or {}).get("allOf") or []):
                if isinstance(part, dict) and part.get("$ref") == ref:
                    branch["allOf"][i] = plain
    return doc


def overlap_only(error):
    """Whether `error` is only that of a `oneOf` whose branches overlap: the union holds the
    value under several branches, or a union around it fails only because of such an inner
    one in one of its branches."""
    if error.validator == "oneOf" and "is valid under each of" in error.message:
        return True
    if error.validator in ("oneOf", "anyOf") and error.context:
        branches = {}
        for c in error.context:
            branches.setdefault(c.relative_schema_path[0], []).append(c)
        return any(all(overlap_only(c) for c in cs) for cs in branches.values())
    return False


def matching_text(pattern, shortest=0, longest=None):
    """A string that `pattern` matches (hypothesis, which schemathesis brings, reads the
    regular expression); None when it cannot make one."""
    try:
        from hypothesis import strategies as st
        from hypothesis.errors import NonInteractiveExampleWarning
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonInteractiveExampleWarning)
            return st.from_regex(pattern, fullmatch=True).filter(
                lambda t: t.strip() != "" and len(t) >= shortest and (longest is None or len(t) <= longest)
            ).example()
    except Exception:
        return None


def query_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return [query_text(v) for v in value]
    if isinstance(value, dict):
        return json.dumps(value)
    return value


# What a browser or `requests` sends, and MoySklad requires (without it: 415). urllib sends
# none; the sandbox answers uncompressed, so nothing here decodes.
ACCEPT_ENCODING = "gzip, deflate"


def send(req):
    """Status, body, Content-Type and the sandbox's X-APIStend-Invalid of one request."""
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            h = resp.headers
            return resp.status, resp.read(), h.get("Content-Type", ""), h.get("X-APIStend-Invalid")
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers.get("Content-Type", ""), e.headers.get("X-APIStend-Invalid")


def broken_request(doc, op, shared, servers, url_of, path, query, body, ctype, headers, method):
    """The request made invalid in one way its description forbids, and what was broken: a
    JSON body made malformed; else a required query parameter left out; else a path
    parameter that is an integer or a UUID given a word; else a query parameter that is an
    integer, a boolean or an enum given a word. None when the description allows every
    request (no body, no required or typed parameter)."""
    params = [deref(doc, p) for p in shared + (op.get("parameters") or [])]

    def typed(p):
        t = deref(doc, p.get("schema", {}))
        return t.get("type") in ("integer", "number", "boolean") or "enum" in t or t.get("format") == "uuid"

    json_body = bool(ctype and "json" in ctype)
    required = [p["name"] for p in params if p.get("in") == "query" and p.get("required")]
    concrete, what = path, None
    for p in params:
        value = p.get("example", sample(doc, p.get("schema", {})))
        if p.get("in") == "path":
            if typed(p) and what is None and not json_body and not required:
                value, what = "not-a-value", f"path {p['name']} given a word"
            concrete = concrete.replace("{" + p["name"] + "}", urllib.parse.quote(str(value), safe=""))
    q = dict(query)
    data = body
    if json_body:
        data, what = b'{"broken":', "malformed JSON"
    elif required:
        q.pop(required[0], None)
        what = f"query {required[0]} left out"
    elif what is None:
        optional = [p["name"] for p in params if p.get("in") == "query" and typed(p)]
        if not optional:
            return None
        q[optional[0]] = "not-a-value"
        what = f"query {optional[0]} given a word"
    url = url_of(servers[0]["url"], concrete)
    if q:
        url += "?" + urllib.parse.urlencode(q, doseq=True)
    req = urllib.request.Request(url, data=data, method=method.upper())
    for k, v in headers.items():
        req.add_header(k, v)
    req.add_header("X-Mock-Delay", "0")
    req.add_header("Accept-Encoding", ACCEPT_ENCODING)
    if ctype:
        req.add_header("Content-Type", ctype)
    return what, req


FORMATS = {
    "date-time": re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$"),
    "date": re.compile(r"^\d{4}-\d{2}-\d{2}$"),
    # Yandex Market's `time` is `ЧЧ:ММ` (its description's words), not RFC 3339's full-time.
    "time": re.compile(r"^\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$"),
    "uuid": re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"),
    "email": re.compile(r"^[^@\s]+@[^@\s]+$"),
    "uri": re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S*$"),
}
NUMERIC = {"int", "int32", "int64", "uint", "uint32", "uint64", "float", "float32", "float64", "double",
           "decimal"}


def format_problems(doc, schema, value, where="$", depth=0):
    """Where a string of the answer breaks the format its schema declares (a date, a time, a
    UUID, a number written as a string): a client parses those. Unions are not entered (which
    branch holds a value is the schema validator's question)."""
    s = deref(doc, schema or {})
    if depth > 24 or not isinstance(s, dict):
        return []
    out = []
    for part in s.get("allOf") or []:
        out += format_problems(doc, part, value, where, depth + 1)
    if isinstance(value, dict):
        for name, sub in (s.get("properties") or {}).items():
            if name in value:
                out += format_problems(doc, sub, value[name], f"{where}.{name}", depth + 1)
    elif isinstance(value, list) and isinstance(s.get("items"), dict):
        for i, item in enumerate(value[:50]):
            out += format_problems(doc, s["items"], item, f"{where}[{i}]", depth + 1)
    elif isinstance(value, str) and s.get("type") in ("string", None):
        fmt = s.get("format")
        pattern = FORMATS.get(fmt)
        if pattern is not None and not pattern.match(value):
            out.append(f"{where}: {value!r} is no {fmt}")
        elif fmt in NUMERIC:
            try:
                float(value)
            except ValueError:
                out.append(f"{where}: {value!r} is no {fmt} number")
    return out


def validator_for(doc, schema):
    full = dict(deref(doc, schema))
    full["components"] = doc.get("components", {})
    oas31 = str(doc.get("openapi", "3.0")).startswith("3.1")
    cls = OAS31Validator if oas31 else OAS30Validator
    return cls(full)


def walk(name, docs, base, headers, url_of, out):
    # What is walked is each operation's example: an operation bound to a collection would
    # otherwise answer the description's made-up ids with its 404 (it holds no such object).
    headers = {**headers, "X-Mock-State": "off"}
    stats = {"service": name, "operations": 0, "valid": 0, "invalid": 0, "not_answered": 0,
             "schema_unusable": 0, "overlapping_union": 0, "refused_valid": 0, "refused_broken": 0, "format_violations": 0,
             "unbreakable": 0, "failures": []}
    for doc in docs:
        for path, item in (doc.get("paths") or {}).items():
            shared = item.get("parameters") or []
            for method in METHODS:
                op = item.get(method)
                if not isinstance(op, dict):
                    continue
                stats["operations"] += 1
                concrete, query = path, {}
                for p in [deref(doc, p) for p in shared + (op.get("parameters") or [])]:
                    value = p.get("example", sample(doc, p.get("schema", {})))
                    if p.get("in") == "path":
                        concrete = concrete.replace("{" + p["name"] + "}", urllib.parse.quote(str(value), safe=""))
                    elif p.get("in") == "query" and p.get("required"):
                        # As a client sends it: a list repeated (`ids=1&ids=2`), a boolean as
                        # JSON writes it.
                        query[p["name"]] = query_text(value)
                body, ctype = None, None
                rb = deref(doc, op.get("requestBody") or {})
                content = rb.get("content") or {}
                if content:
                    ctype = next(iter(content))
                    media = content[ctype]
                    if "json" in ctype:
                        value = media.get("example")
                        if value is None and media.get("examples"):
                            value = deref(doc, next(iter(media["examples"].values()))).get("value")
                        if value is None:
                            value = sample(doc, media.get("schema", {}))
                        body = json.dumps(value).encode()
                    else:
                        body = b"x"
                servers = op.get("servers") or item.get("servers") or doc.get("servers") or [{"url": ""}]
                url = url_of(servers[0]["url"], concrete)
                if query:
                    url += "?" + urllib.parse.urlencode(query, doseq=True)
                req = urllib.request.Request(url, data=body, method=method.upper())
                for k, v in headers.items():
                    req.add_header(k, v)
                req.add_header("X-Mock-Delay", "0")
                req.add_header("Accept-Encoding", ACCEPT_ENCODING)
                if ctype:
                    req.add_header("Content-Type", ctype)
                status, raw, got_type, why = send(req)
                label = f"{method.upper()} {path}"
                if why is not None:
                    # A request built from the description refused as not one it allows.
                    stats["refused_valid"] += 1
                    stats["failures"].insert(0, f"{label}: refused as invalid: {why}")
                broken = broken_request(doc, op, shared, servers, url_of, path, query, body, ctype, headers,
                                        method)
                if broken is None:
                    stats["unbreakable"] += 1
                else:
                    what, breq = broken
                    b_status, _, _, b_why = send(breq)
                    if b_status == 400 and b_why:
                        stats["refused_broken"] += 1
                    else:
                        stats["failures"].insert(0, f"{label}: {what} answered {b_status}, not refused")
                responses = op.get("responses", {})
                if not (200 <= status < 300) or str(status) not in responses:
                    stats["not_answered"] += 1
                    stats["failures"].insert(0, f"{label}: {status} {raw[:160]!r}")
                    continue
                resp_doc = deref(doc, responses[str(status)])
                media = (resp_doc.get("content") or {}) if status != 204 else {}
                json_type = next((t for t in media if "json" in t), None)
                essence = got_type.split(";")[0].strip()
                if not media:
                    # No content documented: none sent, and no Content-Type.
                    if raw or got_type:
                        stats["invalid"] += 1
                        stats["failures"].append(f"{label}: content {got_type!r} {raw[:40]!r} where none is documented")
                    else:
                        stats["valid"] += 1
                    continue
                if json_type is None:
                    # A file: of the documented type, not JSON.
                    if essence in [t.split(";")[0].strip() for t in media] and raw:
                        stats["valid"] += 1
                    else:
                        stats["invalid"] += 1
                        stats["failures"].append(f"{label}: {got_type!r} where {list(media)} is documented")
                    continue
                schema = media[json_type].get("schema")
                try:
                    value = json.loads(raw) if raw else None
                    errors = [] if schema is None else list(validator_for(doc, schema).iter_errors(value))
                    formats = format_problems(doc, schema, value) if schema is not None else []
                    if formats:
                        stats["format_violations"] += 1
                        stats["failures"].insert(0, f"{label}: {formats[0]}")
                    if not errors:
                        stats["valid"] += 1
                    elif all(overlap_only(e) for e in errors):
                        # Valid, except that a `oneOf` whose branches overlap (MoySklad's
                        # `assortment`: product, service, variant, bundle and consignment are
                        # open objects with no required property, so every product is also a
                        # valid service) holds it under more than one branch. No entity as the
                        # service sends one matches exactly one of them; counted apart.
                        stats["overlapping_union"] += 1
                    else:
                        raise errors[0]
                except Exception as e:  # noqa: BLE001 - any failure is an invalid answer
                    first = str(e).splitlines()[0][:200]
                    # A schema the validator cannot read (Ozon's `type: "array of strings"`,
                    # `int`, `timestamp`) checks nothing: counted apart, not as valid.
                    key = "schema_unusable" if first.startswith("Unknown type") else "invalid"
                    stats[key] += 1
                    stats["failures"].append(f"{label}: {first}")
    stats["failures"] = stats["failures"][:20]
    out.write(json.dumps(stats, ensure_ascii=False) + "\n")
    out.flush()


def walk_documented(name, url_base, key, endpoints_path, out, id_value="1"):
    """Endpoints documented without an OpenAPI (amoCRM's endpoints.json, from its docs and SDK;
    MoySklad's documentation-only endpoints): each is sent with its documented request body and
    must answer its documented status (200 when none is given), and a JSON body with the
    documented example's keys."""
    with open(endpoints_path, encoding="utf-8") as f:
        endpoints = json.load(f)["endpoints"]
    stats = {"service": name, "operations": 0, "valid": 0, "invalid": 0, "not_answered": 0,
             "schema_unusable": 0, "failures": []}
    for ep in endpoints:
        stats["operations"] += 1
        # An id as the service writes one (`id_value`: MoySklad's are UUIDs, amoCRM's numbers).
        path = ep["path"].replace("{id}", id_value)
        while "{" in path:
            i, j = path.index("{"), path.index("}")
            path = path[:i] + id_value + path[j + 1:]
        # The documentation's query strings sometimes sit in the path (`/entity/product/{id}&expand=files`).
        if "&" in path and "?" not in path:
            path = path.replace("&", "?", 1)
        body = ep.get("example_request_body")
        made_up = body is None and ep["method"] in ("POST", "PUT")
        if made_up:
            body = {}  # a write sends a body, if only an empty one
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"{url_base}{path}", data=data, method=ep["method"])
        if made_up:
            # The documentation gives no request (an export's template): what is walked is the
            # answer, so the made-up body is not judged.
            req.add_header("X-Mock-Validation", "off")
        req.add_header("Authorization", f"Bearer {key}")
        req.add_header("X-Mock-Delay", "0")
        req.add_header("Accept-Encoding", ACCEPT_ENCODING)
        req.add_header("X-Mock-State", "off")  # the examples are walked, not the collections
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        label = f"{ep['method']} {ep['path']}"
        want = ep.get("example_status")
        if status != want and not (want is None and 200 <= status < 300):
            stats["not_answered"] += 1
            stats["failures"].append(f"{label}: {status}, documented {want or '2xx'}")
            continue
        expected = ep.get("example_response")
        got = json.loads(raw) if raw else None
        same_shape = (expected is None and not raw) or (
            isinstance(expected, dict) and isinstance(got, dict) and set(expected) <= set(got)
        ) or (not isinstance(expected, dict) and got == expected)
        if same_shape:
            stats["valid"] += 1
        else:
            stats["invalid"] += 1
            stats["failures"].append(f"{label}: body {raw[:120]!r}")
    stats["failures"] = stats["failures"][:20]
    out.write(json.dumps(stats, ensure_ascii=False) + "\n")
    out.flush()


def load(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    doc = json.loads(text) if path.endswith(".json") else yaml.safe_load(text)
    return break_discriminator_cycles(doc)


def main():
    base, key, shared = sys.argv[1], sys.argv[2], sys.argv[3]
    if shared == "--document":
        path, prefix = sys.argv[4], sys.argv[5]
        walk("document", [load(path)], base, {"Authorization": f"Bearer {key}"},
             lambda s, p: f"{base}{prefix}{urllib.parse.urlparse(s).path.rstrip('/')}{p}", sys.stdout)
        return
    wb_docs = [load(p) for p in sorted(glob.glob(os.path.join(shared, "wb-openapi", "*.yaml")))]

    def wb_url(server, path):
        host = urllib.parse.urlparse(server).hostname or ""
        return f"{base}/wb/{host.split('.')[0]}{path}"

    only = set(sys.argv[4:])
    services = [
        ("wb", wb_docs, {"Authorization": key}, wb_url),
        ("apify", [load(os.path.join(shared, "specs/apify/openapi.yaml"))],
         {"Authorization": f"Bearer {key}"}, lambda s, p: f"{base}/apify{p}"),
        ("ozon", [load(os.path.join(shared, "specs/ozon/seller-openapi.json"))],
         {"Client-Id": "1", "Api-Key": key}, lambda s, p: f"{base}/ozon{p}"),
        ("ymarket", [load(os.path.join(shared, "specs/yandex-market/openapi.yaml"))],
         {"Api-Key": key}, lambda s, p: f"{base}/ymarket{p}"),
        ("moysklad", [load(os.path.join(shared, "specs/moysklad/openapi.yaml"))],
         {"Authorization": f"Bearer {key}"},
         lambda s, p: f"{base}/moysklad{urllib.parse.urlparse(s).path.rstrip('/')}{p}"),
    ]
    for name, docs, headers, url_of in services:
        if not only or name in only:
            walk(name, docs, base, headers, url_of, sys.stdout)
    if not only or "amocrm" in only:
        walk_documented("amocrm", f"{base}/amocrm", key,
                        os.path.join(shared, "specs/amocrm/endpoints.json"), sys.stdout)
    if not only or "moysklad-doc-only" in only:
        walk_documented("moysklad-doc-only", f"{base}/moysklad/api/remap/1.2", key,
                        os.path.join(shared, "specs/moysklad/doc-only-endpoints.json"), sys.stdout,
                        id_value="3fa85f64-5717-4562-b3fc-2c963f66afa6")


if __name__ == "__main__":
    main()
