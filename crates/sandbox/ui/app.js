// The APIStend dashboard: the management API (/api/v1) seen in a page. No framework, no CDN: the
// binary embeds this file. The token stays in this tab's sessionStorage and is sent as a bearer
// token; the live feed is read with fetch (EventSource cannot send an Authorization header).
"use strict";

const $ = (id) => document.getElementById(id);
const HISTORY_MS = 5 * 60 * 1000;
const SB_PAGE = 50;
const B_PAGE = 25;

const ui = {
  token: sessionStorage.getItem("apistend-token") || "",
  services: [],
  sbOffset: 0,
  sbTotal: 0,
  sandbox: null,
  bOffset: 0,
  feed: null,
  history: new Map(), // bucket "key|service|group" -> [[t, remaining, limit]]
  rates: new Map(), // "service/group" -> [[t, answered/s, refused/s]]
  refusals: [],
};

class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

async function api(method, path, body, signal) {
  const init = { method, headers: { Authorization: "Bearer " + ui.token }, signal };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  if (r.status === 401) {
    logout("The token was not accepted.");
    throw new ApiError(401, "unauthorized");
  }
  if (!r.ok) {
    let detail = r.statusText;
    try {
      detail = (await r.json()).detail || detail;
    } catch (_) {}
    throw new ApiError(r.status, detail);
  }
  return r;
}

const json = async (method, path, body) => (await api(method, path, body)).json();

// A moment as a 24-hour local clock with milliseconds (`14:03:27.415`), whatever the locale.
function clock(ms) {
  const d = new Date(ms);
  const p = (n, w = 2) => String(n).padStart(w, "0");
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

// --- log in ---------------------------------------------------------------

function show(view) {
  $("login-view").hidden = view !== "login";
  $("app-view").hidden = view !== "app";
  $("who").hidden = view !== "app";
}

function logout(why) {
  stopFeed();
  ui.token = "";
  sessionStorage.removeItem("apistend-token");
  $("login-error").textContent = why || "";
  show("login");
}

async function login(token) {
  ui.token = token;
  try {
    await api("GET", "/api/v1/sandboxes?limit=1");
  } catch (e) {
    if (e.status !== 401) $("login-error").textContent = "The sandbox answered: " + e.message;
    return;
  }
  sessionStorage.setItem("apistend-token", token);
  $("login-error").textContent = "";
  show("app");
  await start();
}

// --- sandboxes -------------------------------------------------------------

async function start() {
  ui.services = await json("GET", "/api/v1/services");
  const scenarios = await json("GET", "/api/v1/scenarios");
  fillSelect($("s-scenario"), [["", "none"], ...scenarios.map((s) => [s, s])]);
  fillSelect($("f-service"), [["", "all"], ...ui.services.map((s) => [s.id, s.id])]);
  fillSelect($("l-service"), ui.services.map((s) => [s.id, s.id]));
  limitGroups();
  await loadSandboxes();
}

function fillSelect(sel, options) {
  const keep = sel.value;
  sel.replaceChildren(...options.map(([v, t]) => el("option", { value: v }, t)));
  if (options.some(([v]) => v === keep)) sel.value = keep;
}

async function loadSandboxes() {
  const q = $("search").value.trim();
  const params = new URLSearchParams({ offset: ui.sbOffset, limit: SB_PAGE });
  if (q) params.set("q", q);
  const r = await api("GET", "/api/v1/sandboxes?" + params);
  ui.sbTotal = Number(r.headers.get("x-total-count") || 0);
  const list = await r.json();
  $("sandboxes").replaceChildren(
    ...list.map((s) =>
      el(
        "li",
        {
          class: ui.sandbox && ui.sandbox.id === s.id ? "chosen" : "",
          "data-id": s.id,
          onclick: () => choose(s.id),
        },
        el("strong", {}, s.name),
        el("span", { class: "muted" }, ` ${s.id} · ${s.keys.length} key${s.keys.length === 1 ? "" : "s"}`),
      ),
    ),
  );
  const to = Math.min(ui.sbOffset + list.length, ui.sbTotal);
  $("sb-range").textContent = ui.sbTotal ? `${ui.sbOffset + 1}–${to} of ${ui.sbTotal}` : "none";
  $("sb-prev").disabled = ui.sbOffset === 0;
  $("sb-next").disabled = to >= ui.sbTotal;
}

async function choose(id) {
  const s = await json("GET", "/api/v1/sandboxes/" + encodeURIComponent(id));
  ui.sandbox = s;
  ui.bOffset = 0;
  ui.history.clear();
  ui.rates.clear();
  ui.refusals = [];
  $("empty").hidden = true;
  $("sandbox").hidden = false;
  $("sb-title").textContent = `${s.name} (${s.id})`;
  $("sb-keys").textContent = s.keys.join(", ") || "none";
  fillSelect($("f-key"), [["", "all"], ...s.keys.map((k) => [k, k])]);
  filterGroups();
  limitGroups();
  const st = s.settings || {};
  $("s-latency").value = st.latency_ms ?? "";
  $("s-scenario").value = st.scenario ? st.scenario.name : "";
  if (st.scenario) {
    $("s-probability").value = st.scenario.probability;
    $("s-seed").value = st.scenario.seed;
  }
  renderRefusals();
  countObjects();
  ui.requestShown = null;
  $("request-detail").hidden = true;
  loadRequests();
  document.querySelectorAll("#sandboxes li").forEach((li) => li.classList.toggle("chosen", li.dataset.id === id));
  startFeed();
}

function groupsOf(service) {
  const s = ui.services.find((x) => x.id === service);
  return s ? s.groups : [];
}

function filterGroups() {
  const groups = groupsOf($("f-service").value).filter((g) => !g.per_host);
  fillSelect($("f-group"), [["", "all"], ...groups.map((g) => [g.id, g.id])]);
}

// The limit form's groups for its service, and the chosen group's limit now: this sandbox's
// own when it has one, else the catalog's.
function limitGroups() {
  const service = $("l-service").value;
  const groups = groupsOf(service);
  fillSelect($("l-group"), groups.map((g) => [g.id, g.id]));
  const group = $("l-group").value;
  const own = ((ui.sandbox && ui.sandbox.limits) || []).find((l) => l.service === service && l.group === group);
  const g = own || groups.find((x) => x.id === group);
  if (g) {
    $("l-burst").value = g.burst;
    $("l-interval").value = g.interval_ms;
  }
  $("l-own").textContent = own ? "this sandbox's own limit" : "the service's limit";
}

// The limit form follows the filter: its service, and its group when one is chosen.
function limitFollowsFilter() {
  const service = $("f-service").value;
  if (!service) return;
  $("l-service").value = service;
  limitGroups();
  if ($("f-group").value) {
    $("l-group").value = $("f-group").value;
    limitGroups();
  }
}

function filter() {
  const p = new URLSearchParams();
  for (const [name, sel] of [["service", "f-service"], ["group", "f-group"], ["key", "f-key"]]) {
    if ($(sel).value) p.set(name, $(sel).value);
  }
  return p;
}

// --- the live feed ---------------------------------------------------------

function stopFeed() {
  if (ui.feed) ui.feed.abort();
  ui.feed = null;
  $("live").classList.remove("on");
}

async function startFeed() {
  stopFeed();
  const ctl = new AbortController();
  ui.feed = ctl;
  const p = filter();
  p.set("offset", ui.bOffset);
  p.set("limit", B_PAGE);
  p.set("order", $("f-order").value);
  p.set("interval_ms", 500);
  const path = `/api/v1/sandboxes/${encodeURIComponent(ui.sandbox.id)}/events?${p}`;
  try {
    // The signal ends this feed's request when another feed replaces it (a new filter, page or
    // sandbox): without it the old stream would go on rendering its own page over the new one.
    const r = await api("GET", path, undefined, ctl.signal);
    $("live").classList.add("on");
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let cut;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        let name = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) name = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (ctl.signal.aborted) return;
        if (data.length) onEvent(name, JSON.parse(data.join("\n")));
      }
    }
  } catch (e) {
    if (ctl.signal.aborted) return;
  }
  if (ui.feed === ctl) {
    $("live").classList.remove("on");
    // The feed ended (the sandbox restarted, the network dropped): try again shortly.
    setTimeout(() => ui.feed === ctl && startFeed(), 2000);
  }
}

function onEvent(name, d) {
  if (name === "buckets") onBuckets(d);
  else if (name === "rates") {
    onRates(d);
    loadRequests();
  }
  else if (name === "refusal") {
    ui.refusals.unshift(d);
    ui.refusals.length = Math.min(ui.refusals.length, 50);
    renderRefusals();
  } else if (name === "gone") {
    ui.sandbox = null;
    stopFeed();
    $("sandbox").hidden = true;
    $("empty").hidden = false;
    loadSandboxes();
  }
}

function push(map, id, point, now) {
  let h = map.get(id);
  if (!h) map.set(id, (h = []));
  h.push(point);
  while (h.length && h[0][0] < now - HISTORY_MS) h.shift();
  return h;
}

function onBuckets(d) {
  const tbody = $("buckets").tBodies[0];
  const rows = d.buckets.map((b) => {
    const id = `${b.key}|${b.service}|${b.group}`;
    // The first time a feed shows a bucket, the server sends what its requests did to it in the
    // last minutes (kept while no page watched); the page goes on from there.
    if (b.history) ui.history.set(id, b.history.filter((p) => p[0] < d.at_ms));
    const h = push(ui.history, id, [d.at_ms, b.remaining, b.limit], d.at_ms);
    const share = b.limit ? b.remaining / b.limit : 0;
    const canvas = el("canvas", { width: 240, height: 36 });
    spark(canvas, h, d.at_ms, (p) => p[1], (p) => p[2]);
    return el(
      "tr",
      {
        "data-bucket": id,
        "data-remaining": b.remaining,
        "data-limit": b.limit,
        "data-history": h.length,
        "data-history-low": Math.min(...h.map((p) => p[1])),
        class: b.last_request_ms ? "active" : "",
        title: b.last_request_ms ? `last request ${clock(b.last_request_ms)}` : "no request in the last five minutes",
      },
      el("td", { class: "mono" }, b.key),
      el("td", {}, `${b.service} / ${b.group}`),
      el("td", {}, bar(share)),
      el("td", {}, canvas),
      el("td", { class: "num" }, `${b.remaining} / ${b.limit}`, b.retry_after_ms ? el("small", {}, ` next in ${b.retry_after_ms} ms`) : "",
        b.locked_for_ms ? el("strong", { class: "locked", title: "locked out after repeated rejections; reset clears it" }, ` locked ${Math.ceil(b.locked_for_ms / 1000)} s`) : ""),
      el("td", {}, el("button", { class: "quiet", title: "refill this bucket", onclick: () => resetBuckets({ key: b.key, service: b.service, group: b.group }) }, "reset")),
    );
  });
  tbody.replaceChildren(...rows);
  $("b-note").textContent = rows.length ? "" : "(none match)";
  $("b-range").textContent = rows.length ? `${ui.bOffset + 1}–${ui.bOffset + rows.length}${d.more ? "+" : ""}` : "";
  $("b-prev").disabled = ui.bOffset === 0;
  $("b-next").disabled = !d.more;
}

function onRates(d) {
  const per = 1000 / d.interval_ms;
  const seen = new Set();
  for (const g of d.groups) {
    const id = `${g.service} / ${g.group ?? "-"}`;
    seen.add(id);
    push(ui.rates, id, [d.at_ms, g.answered * per, g.refused * per], d.at_ms);
  }
  for (const [id] of ui.rates) if (!seen.has(id)) push(ui.rates, id, [d.at_ms, 0, 0], d.at_ms);
  const tbody = $("rates").tBodies[0];
  tbody.replaceChildren(
    ...[...ui.rates.entries()].map(([id, h]) => {
      const last = h[h.length - 1];
      const canvas = el("canvas", { width: 200, height: 36 });
      const top = Math.max(1, ...h.map((p) => p[1]));
      spark(canvas, h, d.at_ms, (p) => p[1], () => top, (p) => p[2]);
      return el("tr", {}, el("td", {}, id), el("td", { class: "num" }, last[1].toFixed(1)), el("td", { class: "num" }, last[2].toFixed(1)), el("td", {}, canvas));
    }),
  );
  if (d.missed) $("b-note").textContent = `(the feed fell behind by ${d.missed} requests)`;
}

// A level bar; set through the CSSOM (the page's CSP allows no inline style attribute).
function bar(share) {
  const fill = el("i", { class: share < 0.2 ? "low" : "" });
  fill.style.width = `${(share * 100).toFixed(1)}%`;
  return el("div", { class: "bar" }, fill);
}

// A line of `value` against `top` since the first point (at most five minutes);
// `second` (refusals) as a red area under it, so that the requests' line stays visible where
// every request was refused.
function spark(canvas, h, now, value, top, second) {
  const c = canvas.getContext("2d");
  const w = canvas.width, ht = canvas.height;
  c.clearRect(0, 0, w, ht);
  c.strokeStyle = "#d8dde6";
  c.strokeRect(0.5, 0.5, w - 1, ht - 1);
  const span = Math.max(30_000, Math.min(HISTORY_MS, now - (h.length ? h[0][0] : now)));
  const x = (t) => w - ((now - t) / span) * w;
  const y = (v, p) => ht - 2 - (v / Math.max(1, top(p))) * (ht - 4);
  const line = (f, color) => {
    c.beginPath();
    c.strokeStyle = color;
    c.lineWidth = 1.5;
    h.forEach((p, i) => (i ? c.lineTo(x(p[0]), y(f(p), p)) : c.moveTo(x(p[0]), y(f(p), p))));
    c.stroke();
  };
  if (second && h.length) {
    c.beginPath();
    c.moveTo(x(h[0][0]), ht - 2);
    h.forEach((p) => c.lineTo(x(p[0]), y(second(p), p)));
    c.lineTo(x(h[h.length - 1][0]), ht - 2);
    c.closePath();
    c.fillStyle = "rgba(220, 38, 38, 0.35)";
    c.fill();
  }
  line(value, "#2563eb");
}

function renderRefusals() {
  $("refusals").replaceChildren(
    ...ui.refusals.map((r) =>
      el(
        "li",
        {},
        el(
          "details",
          {},
          el("summary", {}, `${clock(r.at_ms)} · ${r.status} · ${r.method} ${r.path} · ${r.key} · ${r.service} / ${r.group ?? "-"}`),
          el("pre", {}, Object.entries(r.headers).map(([k, v]) => `${k}: ${v}`).join("\n") + "\n\n" + r.body),
        ),
      ),
    ),
  );
  if (!ui.refusals.length) $("refusals").append(el("li", { class: "muted" }, "none yet"));
}

// --- the request journal ----------------------------------------------------

// The sandbox's latest requests (the journal) and its keys' conduct; read again with each
// `rates` tick of the live feed, one read at a time.
async function loadRequests() {
  if (!ui.sandbox || ui.loadingRequests) return;
  ui.loadingRequests = true;
  try {
    const id = encodeURIComponent(ui.sandbox.id);
    const q = new URLSearchParams({ order: "newest", limit: "50" });
    if ($("r-refused").checked) q.set("refused", "any");
    const page = await json("GET", `/api/v1/sandboxes/${id}/requests?${q}`);
    const conduct = await json("GET", `/api/v1/sandboxes/${id}/conduct`);
    renderRequests(page.requests);
    const bad = conduct.verdict !== "clean";
    $("conduct").className = bad ? "bad" : "muted";
    $("conduct").textContent = bad
      ? "Conduct: " + conduct.reasons.join("; ")
      : `Conduct: clean (${conduct.requests} requests)`;
  } catch (_) {
    // The next tick reads again.
  } finally {
    ui.loadingRequests = false;
  }
}

function renderRequests(requests) {
  ui.requests = new Map(requests.map((r) => [r.id, r]));
  $("requests").tBodies[0].replaceChildren(
    ...requests.map((r) => {
      const d = r.decision;
      const decided = d.refused ? `refused: ${d.refused}` + (d.wait_ms != null ? `, wait ${d.wait_ms} ms` : "") : d.remaining != null ? `${d.remaining}/${d.limit} left` : "";
      const row = el(
        "tr",
        { "data-id": r.id, onclick: () => showRequest(r.id) },
        el("td", { class: "num" }, clock(r.at_ms)),
        el("td", { class: "mono" }, r.key),
        el("td", { class: "mono" }, `${r.request.method} ${r.request.path}`),
        el("td", { class: "num" }, String(r.response.status)),
        el("td", {}, decided),
      );
      row.classList.toggle("chosen", r.id === ui.requestShown);
      return row;
    }),
  );
  if (!requests.length) $("requests").tBodies[0].append(el("tr", {}, el("td", { class: "muted", colspan: "5" }, "none yet")));
}

function heads(h) {
  return Object.entries(h).map(([k, v]) => `${k}: ${v}`).join("\n");
}

// A request and its answer, side by side.
function showRequest(id) {
  const r = ui.requests.get(id);
  if (!r) return;
  ui.requestShown = id;
  document.querySelectorAll("#requests tbody tr").forEach((tr) => tr.classList.toggle("chosen", tr.dataset.id === id));
  const q = r.request;
  const body = (b) => b.body ?? (b.body_base64 ? `(${b.body_bytes} bytes, base64) ${b.body_base64}` : "") + (b.body_truncated ? `\n… (${b.body_bytes} bytes in all)` : "");
  $("r-sent").textContent = `${q.method} ${q.path}${q.query ? "?" + q.query : ""}\n${heads(q.headers)}\n\n${body(q)}`;
  const a = r.response;
  const d = r.decision;
  $("r-answer").textContent = `${a.status} · ${r.operation ?? "no operation"} · ${r.group ?? "-"}` + (d.reason ? ` · ${d.reason}` : "") + `\n${heads(a.headers)}\n\n${body(a)}`;
  $("request-detail").hidden = false;
}

async function clearRequests() {
  await api("DELETE", `/api/v1/sandboxes/${encodeURIComponent(ui.sandbox.id)}/requests`);
  ui.requestShown = null;
  $("request-detail").hidden = true;
  await loadRequests();
}

// --- controls ---------------------------------------------------------------

// The objects the sandbox keeps, counted per collection (`service/collection: n`).
async function countObjects() {
  const id = encodeURIComponent(ui.sandbox.id);
  const counts = await json("GET", `/api/v1/sandboxes/${id}/objects/counts`);
  const parts = Object.entries(counts).map(([c, n]) => `${c}: ${n}`);
  $("sb-objects").textContent = parts.join(", ") || "none";
}

async function resetObjects() {
  await api("DELETE", `/api/v1/sandboxes/${encodeURIComponent(ui.sandbox.id)}/objects`);
  await countObjects();
}

async function resetBuckets(f) {
  const p = new URLSearchParams(Object.entries(f).filter(([, v]) => v));
  await api("POST", `/api/v1/sandboxes/${encodeURIComponent(ui.sandbox.id)}/buckets/reset?${p}`);
}

function status(id, text, bad) {
  $(id).textContent = text;
  $(id).classList.toggle("error", !!bad);
}

async function setLimit(ev) {
  ev.preventDefault();
  const [svc, grp] = [$("l-service").value, $("l-group").value];
  try {
    const id = encodeURIComponent(ui.sandbox.id);
    const r = await json("PUT", `/api/v1/sandboxes/${id}/limits/${encodeURIComponent(svc)}/${encodeURIComponent(grp)}`, {
      burst: Number($("l-burst").value),
      // The API takes whole milliseconds (per_second for finer rates).
      interval_ms: Math.max(1, Math.round(Number($("l-interval").value))),
    });
    ui.sandbox = await json("GET", `/api/v1/sandboxes/${id}`);
    limitGroups();
    status("l-status", `${svc} / ${grp}: ${r.burst} per ${r.interval_ms} ms`);
  } catch (e) {
    status("l-status", e.message, true);
  }
}

async function saveSettings(ev) {
  ev.preventDefault();
  const id = encodeURIComponent(ui.sandbox.id);
  try {
    // PUT replaces the defaults: keep what this form does not show.
    const current = await json("GET", `/api/v1/sandboxes/${id}/settings`);
    const body = { bucket_scope: current.bucket_scope || {}, plans: current.plans || {} };
    if ($("s-latency").value !== "") body.latency_ms = Number($("s-latency").value);
    if ($("s-scenario").value) {
      body.scenario = { name: $("s-scenario").value, probability: Number($("s-probability").value) };
      if ($("s-seed").value !== "") body.scenario.seed = Number($("s-seed").value);
    }
    const r = await json("PUT", `/api/v1/sandboxes/${id}/settings`, body);
    status("s-status", "saved" + (r.scenario ? ` (seed ${r.scenario.seed})` : ""));
    if (r.scenario) $("s-seed").value = r.scenario.seed;
  } catch (e) {
    status("s-status", e.message, true);
  }
}

function wire() {
  $("login").addEventListener("submit", (ev) => {
    ev.preventDefault();
    login($("token").value.trim());
  });
  $("logout").addEventListener("click", () => logout());
  let searching;
  $("search").addEventListener("input", () => {
    clearTimeout(searching);
    searching = setTimeout(() => ((ui.sbOffset = 0), loadSandboxes()), 250);
  });
  $("sb-prev").addEventListener("click", () => ((ui.sbOffset = Math.max(0, ui.sbOffset - SB_PAGE)), loadSandboxes()));
  $("sb-next").addEventListener("click", () => ((ui.sbOffset += SB_PAGE), loadSandboxes()));
  $("b-prev").addEventListener("click", () => ((ui.bOffset = Math.max(0, ui.bOffset - B_PAGE)), startFeed()));
  $("b-next").addEventListener("click", () => ((ui.bOffset += B_PAGE), startFeed()));
  $("new-sandbox").addEventListener("click", async () => {
    const name = prompt("Name of the new sandbox", "sandbox");
    if (name === null) return;
    const s = await json("POST", "/api/v1/sandboxes", { name });
    await loadSandboxes();
    await choose(s.id);
  });
  $("f-service").addEventListener("change", () => (filterGroups(), limitFollowsFilter(), (ui.bOffset = 0), startFeed()));
  $("f-group").addEventListener("change", () => (limitFollowsFilter(), (ui.bOffset = 0), startFeed()));
  $("f-order").addEventListener("change", () => ((ui.bOffset = 0), startFeed()));
  $("f-key").addEventListener("change", () => ((ui.bOffset = 0), startFeed()));
  $("reset-all").addEventListener("click", () => {
    if (confirm("Refill every bucket the filter shows, and end their keys' lockouts?")) {
      resetBuckets(Object.fromEntries(filter()));
    }
  });
  $("l-service").addEventListener("change", limitGroups);
  $("l-group").addEventListener("change", limitGroups);
  $("limit-form").addEventListener("submit", setLimit);
  $("settings-form").addEventListener("submit", saveSettings);
  $("objects-refresh").addEventListener("click", countObjects);
  $("objects-reset").addEventListener("click", () => {
    if (confirm("Forget what this sandbox's clients wrote? Every collection starts again with its examples.")) {
      resetObjects();
    }
  });
  $("r-refresh").addEventListener("click", loadRequests);
  $("r-refused").addEventListener("change", loadRequests);
  $("r-clear").addEventListener("click", clearRequests);
}

wire();
if (ui.token) login(ui.token);
else show("login");
