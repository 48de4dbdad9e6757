-- APIStend rate-limit engine, Redis side. A line-by-line transcription of `algo.rs`; keep them in step.
-- One call decides a batch of items in order (the decisions of several requests in one round
-- trip); an item is one operation on one or more buckets.
-- KEYS     the buckets of every item, item after item
-- ARGV[1]  now in µs since the Unix epoch, or '' to read Redis TIME
-- ARGV[2]  extra milliseconds of key TTL beyond the moment the bucket is full again
-- then per item: op, the number of its buckets, and per bucket: algorithm, burst, interval in µs,
--          arg, margin in µs
--   op: a = acquire, s = acquire settled for a margin, p = peek, x = penalize, r = refund,
--       l = align to the tokens the remote service says are left
--   algorithm: g = GCRA, f = fixed window
--   arg: tokens (a, s, r, l) or penalty in µs (x)
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
local floor = math.floor

local function fmt(x) return string.format('%.0f', x) end

-- One operation on one bucket. Its writes are appended to `w` ({key, value, until_us}, or {key}
-- to delete) and made by the caller, so that an item can drop them when another bucket refuses.
local function decide(key, op, algo, burst, t, arg, margin, w)
  local span = burst * t
  local raw = redis.call('GET', key)
  local function store(value, until_us) w[#w + 1] = {key, value, until_us} end

  if algo == 'g' then
    local stored = 0
    if raw then stored = tonumber(raw) or 0 end
    local tat = math.max(stored, now)
    local horizon = now + span
    local function available(x)
      if horizon > x then return floor((horizon - x) / t) end
      return 0
    end
    local function view(x)
      local avail = available(x)
      local retry = x + t - horizon
      if retry < 0 then retry = 0 end
      local ok = 0
      if avail >= 1 then ok = 1 end
      return {ok, avail, retry, x - now}
    end
    if op == 'p' or (op == 'a' and arg == 0) then return view(tat) end
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
        store(fmt(new_tat), new_tat)
        return {1, floor((horizon - new_tat) / t), 0, new_tat - now}
      end
      local retry = new_tat - horizon
      if retry < 0 then retry = 0 end
      if settled_at - now > retry then retry = settled_at - now end
      return {0, available(tat), retry, tat - now}
    end
    if op == 'x' then
      local pfloor = now + math.min(arg, max_span) + (burst - 1) * t
      if pfloor > stored then
        store(fmt(pfloor), pfloor)
        return view(math.max(pfloor, now))
      end
      return view(tat)
    end
    if op == 'r' then
      if stored <= now then return view(now) end
      local new_tat = math.max(stored - arg * t, now)
      if new_tat <= now then w[#w + 1] = {key} else store(fmt(new_tat), new_tat) end
      return view(new_tat)
    end
    if op == 'l' then
      local target = horizon - math.min(arg, burst) * t
      if target > tat then
        store(fmt(target), target)
        return view(target)
      end
      return view(tat)
    end
    return redis.error_reply('apistend: unknown op ' .. tostring(op))
  end

  if algo == 'f' then
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
    local function untl(x)
      local v = x * 1000 - now
      if v < 0 then v = 0 end
      return v
    end
    local function view(act, x, n)
      if not act then return {1, burst, 0, 0} end
      local ok, retry, reset = 0, untl(x), 0
      if n < burst then ok, retry = 1, 0 end
      if n > 0 then reset = untl(x) end
      local rem = burst - n
      if rem < 0 then rem = 0 end
      return {ok, rem, retry, reset}
    end
    local function put(x, n) store(fmt(x) .. ':' .. fmt(n), x * 1000) end
    if op == 's' then
      local settles = prev_end * 1000 + math.min(margin, max_span)
      if (not active) and prev_end > 0 and settles > now then
        return {0, burst, settles - now, 0}
      end
      op = 'a'
    end
    if op == 'p' or (op == 'a' and arg == 0) then return view(active, e, c) end
    if op == 'a' then
      if not active then e, c = now_ms + len, 0 end
      local taken = c + arg
      if taken <= burst then
        put(e, taken)
        return {1, burst - taken, 0, untl(e)}
      end
      local rem = burst - c
      if rem < 0 then rem = 0 end
      return {0, rem, untl(e), untl(e)}
    end
    if op == 'x' then
      local target = math.ceil((now + math.min(arg, max_span)) / 1000)
      if active and e > target then target = e end
      if target > now_ms and not (target == e and burst == c) then
        put(target, burst)
        return view(true, target, burst)
      end
      return view(active, e, c)
    end
    if op == 'r' then
      if active and c > 0 then
        local left = c - arg
        if left < 0 then left = 0 end
        put(e, left)
        return view(true, e, left)
      end
      return view(active, e, c)
    end
    if op == 'l' then
      local used = burst - math.min(arg, burst)
      if not active then e, c = now_ms + len, 0 end
      if used > c then
        put(e, used)
        return view(true, e, used)
      end
      return view(active, e, c)
    end
    return redis.error_reply('apistend: unknown op ' .. tostring(op))
  end
  return redis.error_reply('apistend: unknown algorithm ' .. tostring(algo))
end

local function commit(w)
  for i = 1, #w do
    local e = w[i]
    if e[3] == nil then
      redis.call('DEL', e[1])
    else
      local ttl = math.ceil((e[3] - now) / 1000) + slack
      if ttl < 1 then ttl = 1 end
      redis.call('SET', e[1], e[2], 'PX', ttl)
    end
  end
end

local out, k, a = {}, 1, 3
while a <= #ARGV do
  local op, n = ARGV[a], tonumber(ARGV[a + 1])
  a = a + 2
  local takes = op == 'a' or op == 's'
  local w, which, res = {}, 1, nil
  for j = 1, n do
    local r = decide(KEYS[k], op, ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]),
      tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), w)
    k, a = k + 1, a + 5
    if r.err then return r end
    if j == 1 then res = r end
    if takes and r[1] == 0 then
      -- All or nothing: what the buckets before it would have given is not taken.
      which, res, w = j, r, {}
      k, a = k + (n - j), a + 5 * (n - j)
      break
    end
  end
  commit(w)
  out[#out + 1] = which
  for i = 1, 4 do out[#out + 1] = res[i] end
end
return out
