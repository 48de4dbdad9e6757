-- APIStend rate-limit engine, Redis side. A line-by-line transcription of `algo.rs`; keep them in step.
-- One call decides a batch of items in order (the decisions of several requests in one round
-- trip); an item is one operation on one or more buckets.
-- KEYS     the buckets of every item, item after item
-- ARGV[1]  now in µs since the Unix epoch, or '' to read Redis TIME
-- ARGV[2]  extra milliseconds of key TTL beyond the moment the bucket is full again
-- then per item: op, the number of its buckets, and per bucket: algorithm, burst, interval in µs,
--          arg, margin in µs
--   op: a = acquire, s = acquire settled for a margin, p = peek, x = penalize, r = refund,
--       l = align to the tokens the remote service says are left, c = charge (take, owing what
--       is missing)
--   algorithm: g = GCRA, f = fixed window
--   arg: tokens (a, s, r, l, c) or penalty in µs (x)
-- An item that takes (a, s) from several buckets takes from all of them or from none.
-- Returns five integers per item: which of its buckets is reported (1-based: the refusing one,
-- else the first), allowed (0|1), remaining, retry_after_us, reset_after_us.
local now
if ARGV[1] == '' then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
else
  now = tonumber(ARGV[1])
end
local slack = tonumber(ARGV[2])
local max_span = 4503599627370496
-- max_span in whole milliseconds.
local max_span_ms = 4503599627370
local floor = math.floor

local function fmt(x) return string.format('%.0f', x) end

-- The number an argument spells. The items of a call mostly repeat the same few (a quota's
-- burst and interval, a weight of 1), and parsing one costs Lua 5.1 about four times a lookup.
local parsed = {}
local function num(s)
  local v = parsed[s]
  if v == nil then
    v = tonumber(s)
    parsed[s] = v
  end
  return v
end

-- The helpers are defined once per call, not per bucket: a batch decides dozens of buckets and a
-- closure is an allocation.
local function g_available(x, horizon, t)
  if horizon > x then return floor((horizon - x) / t) end
  return 0
end

local function g_view(x, horizon, t)
  local avail = g_available(x, horizon, t)
  local retry = x + t - horizon
  if retry < 0 then retry = 0 end
  local ok = 0
  if avail >= 1 then ok = 1 end
  return ok, avail, retry, x - now
end

-- The writes of the item being decided, in three flat arrays (key, value — a GCRA's number,
-- formatted once when the call writes it, or a window's string —, until_us or false to
-- delete) reused by every item: made by the caller once the item is decided, so that an item
-- can drop them when another bucket refuses. A decision returns its four numbers as values, not
-- a table: without a table per decision and per write, a 10-item call runs about 1.1x faster.
local wk, wv, wu, nw = {}, {}, {}, 0
local function put(key, value, until_us)
  nw = nw + 1
  wk[nw], wv[nw], wu[nw] = key, value, until_us
end

-- GCRA on one bucket whose stored value is `raw`: allowed (0|1), remaining, retry_after_us,
-- reset_after_us.
local function gcra(key, raw, op, burst, t, arg, margin)
  local span = burst * t
  local stored = 0
  if raw then stored = tonumber(raw) or 0 end
  local tat = math.max(stored, now)
  local horizon = now + span
  if op == 'p' or ((op == 'a' or op == 'c') and arg == 0) then return g_view(tat, horizon, t) end
  -- A plain acquire is a settled one with no margin (the horizon test already demands it).
  if op == 'a' then margin = 0 end
  if op == 'a' or op == 's' then
    local new_tat = tat + arg * t
    local settled_at = 0
    if stored ~= 0 and margin > 0 then
      settled_at = stored + arg * t + math.min(margin, max_span) - span
      if settled_at < 0 then settled_at = 0 end
    end
    if new_tat <= horizon and settled_at <= now then
      put(key, new_tat, new_tat)
      return 1, floor((horizon - new_tat) / t), 0, new_tat - now
    end
    local retry = new_tat - horizon
    if retry < 0 then retry = 0 end
    if settled_at - now > retry then retry = settled_at - now end
    return 0, g_available(tat, horizon, t), retry, tat - now
  end
  if op == 'x' then
    local pfloor = now + math.min(arg, max_span) + (burst - 1) * t
    if pfloor > stored then
      put(key, pfloor, pfloor)
      return g_view(math.max(pfloor, now), horizon, t)
    end
    return g_view(tat, horizon, t)
  end
  if op == 'r' then
    if stored <= now then return g_view(now, horizon, t) end
    local new_tat = math.max(stored - arg * t, now)
    if new_tat <= now then put(key, '', false) else put(key, new_tat, new_tat) end
    return g_view(new_tat, horizon, t)
  end
  if op == 'c' then
    local new_tat = math.min(tat + arg * t, now + max_span)
    put(key, new_tat, new_tat)
    if new_tat <= horizon then return 1, floor((horizon - new_tat) / t), 0, new_tat - now end
    return 0, 0, new_tat + t - horizon, new_tat - now
  end
  if op == 'l' then
    local target = horizon - math.min(arg, burst) * t
    if target > tat then
      put(key, target, target)
      return g_view(target, horizon, t)
    end
    return g_view(tat, horizon, t)
  end
  error('apistend: unknown op ' .. tostring(op))
end

local function f_until(x)
  local v = x * 1000 - now
  if v < 0 then v = 0 end
  return v
end

local function f_view(act, x, n, burst)
  if not act then return 1, burst, 0, 0 end
  local ok, retry, reset = 0, f_until(x), 0
  if n < burst then ok, retry = 1, 0 end
  if n > 0 then reset = f_until(x) end
  local rem = burst - n
  if rem < 0 then rem = 0 end
  return ok, rem, retry, reset
end

local function f_put(key, x, n) put(key, fmt(x) .. ':' .. fmt(n), x * 1000) end

-- A fixed window on one bucket; answers and writes as for `gcra`.
local function window(key, raw, op, burst, t, arg, margin)
  local span = burst * t
  local len = math.ceil(span / 1000)
  if len < 1 then len = 1 end
  local now_ms = floor(now / 1000)
  local active, e, c = false, 0, 0
  local prev_end = 0
  if raw then
    local a, b = string.match(raw, '^(%d+):(%d+)$')
    if a then prev_end = tonumber(a) end
    if a and tonumber(a) > now_ms then
      active, e, c = true, tonumber(a), tonumber(b)
    end
  end
  if op == 's' then
    local settles = prev_end * 1000 + math.min(margin, max_span)
    if (not active) and prev_end > 0 and settles > now then
      return 0, burst, settles - now, 0
    end
    op = 'a'
  end
  if op == 'p' or ((op == 'a' or op == 'c') and arg == 0) then return f_view(active, e, c, burst) end
  if op == 'a' then
    if not active then e, c = now_ms + len, 0 end
    local taken = c + arg
    if taken <= burst then
      f_put(key, e, taken)
      return 1, burst - taken, 0, f_until(e)
    end
    local rem = burst - c
    if rem < 0 then rem = 0 end
    return 0, rem, f_until(e), f_until(e)
  end
  if op == 'x' then
    local target = math.ceil((now + math.min(arg, max_span)) / 1000)
    if active and e > target then target = e end
    if target > now_ms and not (target == e and burst == c) then
      f_put(key, target, burst)
      return f_view(true, target, burst, burst)
    end
    return f_view(active, e, c, burst)
  end
  if op == 'r' then
    if active and c > 0 then
      local left = c - arg
      if left < 0 then left = 0 end
      f_put(key, e, left)
      return f_view(true, e, left, burst)
    end
    return f_view(active, e, c, burst)
  end
  if op == 'c' then
    local ok, rem, retry, reset = window(key, raw, 'a', burst, t, arg, margin)
    if ok == 1 then return ok, rem, retry, reset end
    if not active then e, c = now_ms + len, 0 end
    local taken = c + arg
    -- The window fills, and stays full a window longer for each burst owed (a whole number,
    -- computed without trusting a division's rounding).
    local owed = taken - burst
    local w = floor(owed / burst)
    if w * burst < owed then w = w + 1 end
    local ne = math.min(e + w * len, now_ms + max_span_ms)
    f_put(key, ne, burst)
    return 0, 0, f_until(ne), f_until(ne)
  end
  if op == 'l' then
    local used = burst - math.min(arg, burst)
    if not active then e, c = now_ms + len, 0 end
    if used > c then
      f_put(key, e, used)
      return f_view(true, e, used, burst)
    end
    return f_view(active, e, c, burst)
  end
  error('apistend: unknown op ' .. tostring(op))
end

-- Every bucket of the call is read in one MGET up front, and each written once at the end with
-- its last value: a call of 25 requests on one bucket is then 3 commands, not 50 (a command from
-- a script costs Redis about as much as the script's own work on it). `cur` holds what the items
-- decided so far wrote (false: deleted), which later items of the call read instead.
local fetched = {}
if #KEYS > 0 then fetched = redis.call('MGET', unpack(KEYS)) end
local cur, till, dirty, nd = {}, {}, {}, 0

-- One operation on the bucket `KEYS[i]`.
local function decide(i, op, algo, burst, t, arg, margin)
  local key = KEYS[i]
  local raw = cur[key]
  if raw == nil then raw = fetched[i] end
  if algo == 'g' then return gcra(key, raw, op, burst, t, arg, margin) end
  if algo == 'f' then return window(key, raw, op, burst, t, arg, margin) end
  error('apistend: unknown algorithm ' .. tostring(algo))
end

-- The item's writes become the call's state.
local function commit()
  for i = 1, nw do
    local key = wk[i]
    if till[key] == nil then
      nd = nd + 1
      dirty[nd] = key
    end
    if wu[i] == false then cur[key] = false else cur[key] = wv[i] end
    till[key] = wu[i]
  end
end

-- The call's state written to Redis: each bucket once, with its last value.
local function flush()
  for i = 1, nd do
    local key = dirty[i]
    local until_us = till[key]
    if until_us == false then
      redis.call('DEL', key)
    else
      local ttl = math.ceil((until_us - now) / 1000) + slack
      if ttl < 1 then ttl = 1 end
      local value = cur[key]
      if type(value) == 'number' then value = fmt(value) end
      redis.call('SET', key, value, 'PX', ttl)
    end
  end
end

local out, no, k, a, nargs = {}, 0, 1, 3, #ARGV
while a <= nargs do
  local op, n = ARGV[a], num(ARGV[a + 1])
  a = a + 2
  local takes = op == 'a' or op == 's'
  local which, r1, r2, r3, r4 = 1, 0, 0, 0, 0
  nw = 0
  for j = 1, n do
    local ok, rem, retry, reset = decide(k, op, ARGV[a], num(ARGV[a + 1]),
      num(ARGV[a + 2]), num(ARGV[a + 3]), num(ARGV[a + 4]))
    k, a = k + 1, a + 5
    if j == 1 then r1, r2, r3, r4 = ok, rem, retry, reset end
    if takes and ok == 0 then
      -- All or nothing: what the buckets before it would have given is not taken.
      which, r1, r2, r3, r4, nw = j, ok, rem, retry, reset, 0
      k, a = k + (n - j), a + 5 * (n - j)
      break
    end
  end
  commit()
  out[no + 1], out[no + 2], out[no + 3], out[no + 4], out[no + 5] = which, r1, r2, r3, r4
  no = no + 5
end
flush()
return out
