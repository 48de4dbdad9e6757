-- A sandbox's objects in Redis. KEYS[1] is the sandbox's prefix, apistend:{o:SANDBOX}: every key
-- of the sandbox is below it and carries its hash tag, so a sandbox's objects live in one
-- Cluster slot and one call changes them atomically. ARGV[1] is the operation, ARGV[2] the
-- collection ("service/name"); the rest is the operation's. A collection that has never been
-- touched (no meta hash) answers {"seed"}: the caller sends its first objects and asks again.
--
-- Every change has a revision (Redis's clock in microseconds, never behind the sandbox's last
-- one), answered to the caller, who mirrors what it wrote: a Redis that comes back empty gets
-- the instances' mirrors back through 'restore', which keeps per object the later revision. A
-- deleted object leaves a tombstone (the newest 10 000 per collection); a replace leaves its
-- revision as the clearing, before which nothing comes back.
local p = KEYS[1]
local op = ARGV[1]
local coll = ARGV[2]
local held = p .. ':held'
local colls = p .. ':colls'
-- The next sequential id of each collection ever touched: kept through a reset, so that no id
-- is given twice.
local marks = p .. ':marks'
local last_rev, cleared_at = p .. ':rev', p .. ':cleared'
local TOMBSTONES = 10000
local function k(c, what) return p .. ':c:' .. c .. ':' .. what end
local items, order, meta = k(coll, 'items'), k(coll, 'order'), k(coll, 'meta')
local function str(n) return string.format('%.0f', n) end

-- This change's revision.
local function rev()
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = tonumber(redis.call('GET', last_rev) or '0')
  if now <= last then now = last + 1 end
  redis.call('SET', last_rev, str(now))
  return now
end

-- Writes object id of collection c at the end of its order (with revision r, unless an example),
-- answers its place.
local function put(c, id, json, r)
  local at = redis.call('HINCRBY', k(c, 'meta'), 'next_at', 1)
  redis.call('ZADD', k(c, 'order'), at, id)
  redis.call('HSET', k(c, 'items'), id, json)
  if r then
    redis.call('HSET', k(c, 'revs'), id, str(r))
    redis.call('ZREM', k(c, 'gone'), id)
  end
  return at
end

-- Writes object id of collection c in place (it exists) at revision r.
local function rewrite(c, id, json, r)
  redis.call('HSET', k(c, 'items'), id, json)
  redis.call('HSET', k(c, 'revs'), id, str(r))
end

-- Removes object id of collection c at revision r, leaving its tombstone.
local function bury(c, id, r)
  redis.call('HDEL', k(c, 'items'), id)
  redis.call('ZREM', k(c, 'order'), id)
  redis.call('HDEL', k(c, 'revs'), id)
  local gone = k(c, 'gone')
  redis.call('ZADD', gone, r, id)
  local n = redis.call('ZCARD', gone)
  if n > TOMBSTONES then redis.call('ZREMRANGEBYRANK', gone, 0, n - TOMBSTONES - 1) end
end

local function count(what)
  return tonumber(redis.call('HGET', held, what) or '0')
end

-- The refusal of adding n objects and bytes bytes over the bounds ARGV[3] and ARGV[4], if they
-- do not fit.
local function over(n, bytes)
  if count('objects') + n > tonumber(ARGV[3]) then
    return {'full', 'objects', tostring(count('objects') + n), ARGV[3]}
  end
  if count('bytes') + bytes > tonumber(ARGV[4]) then
    return {'full', 'bytes', tostring(count('bytes') + bytes), ARGV[4]}
  end
  return nil
end

local function drop(c)
  redis.call('DEL', k(c, 'items'), k(c, 'order'), k(c, 'meta'), k(c, 'revs'), k(c, 'gone'))
end

-- Starts collection c at sequential id next (or after the ids it gave before) with the
-- (id, json) pairs of ARGV[from..to], written at revision r (nil: examples). An object restored
-- before (or deleted) stays as it is; new objects go after every one restored.
local function seed(c, next, from, to, r)
  local mark = tonumber(redis.call('HGET', marks, c) or '0')
  if mark > tonumber(next) then next = mark end
  redis.call('HSET', k(c, 'meta'), 'next_id', next, 'next_at', 0)
  redis.call('SADD', colls, c)
  local n, bytes = 0, 0
  for i = from, to, 2 do
    if redis.call('HEXISTS', k(c, 'items'), ARGV[i]) == 0
      and not redis.call('ZSCORE', k(c, 'gone'), ARGV[i]) then
      put(c, ARGV[i], ARGV[i + 1], r)
      n = n + 1
      bytes = bytes + #ARGV[i + 1]
    end
  end
  local top = redis.call('ZRANGE', k(c, 'order'), -1, -1, 'WITHSCORES')
  if top[2] and tonumber(top[2]) > n then redis.call('HSET', k(c, 'meta'), 'next_at', top[2]) end
  redis.call('HINCRBY', held, 'objects', n)
  redis.call('HINCRBY', held, 'bytes', bytes)
end

-- Restores (id, rev, at, json or '' for a deletion) quadruples of ARGV[from..to] to collection
-- c: each only where it is later than what Redis holds for its id and not before the clearing.
local function restore(c, from, to, cleared)
  local n, bytes = 0, 0
  local revs, gone = k(c, 'revs'), k(c, 'gone')
  for i = from, to, 4 do
    local id, r, json = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 3]
    local cur = tonumber(redis.call('HGET', revs, id) or redis.call('ZSCORE', gone, id) or '-1')
    if r >= cleared and r > cur then
      local old = redis.call('HGET', k(c, 'items'), id)
      if old then
        n = n - 1
        bytes = bytes - #old
      end
      if json == '' then
        bury(c, id, r)
      else
        if not old then redis.call('ZADD', k(c, 'order'), ARGV[i + 2], id) end
        rewrite(c, id, json, r)
        redis.call('ZREM', gone, id)
        n = n + 1
        bytes = bytes + #json
      end
    end
  end
  redis.call('HINCRBY', held, 'objects', n)
  redis.call('HINCRBY', held, 'bytes', bytes)
  -- New objects go after the ones restored.
  local top = redis.call('ZRANGE', k(c, 'order'), -1, -1, 'WITHSCORES')
  local at = redis.call('HGET', k(c, 'meta'), 'next_at')
  if at and top[2] and tonumber(top[2]) > tonumber(at) then
    redis.call('HSET', k(c, 'meta'), 'next_at', top[2])
  end
end

-- Drops the objects of every collection written before the clearing at revision r.
local function clear_before(r)
  for _, c in ipairs(redis.call('SMEMBERS', colls)) do
    local revs = redis.call('HGETALL', k(c, 'revs'))
    for i = 1, #revs, 2 do
      if tonumber(revs[i + 1]) < r then
        local old = redis.call('HGET', k(c, 'items'), revs[i])
        if old then
          redis.call('HINCRBY', held, 'objects', -1)
          redis.call('HINCRBY', held, 'bytes', -#old)
        end
        redis.call('HDEL', k(c, 'items'), revs[i])
        redis.call('ZREM', k(c, 'order'), revs[i])
        redis.call('HDEL', k(c, 'revs'), revs[i])
      end
    end
    redis.call('ZREMRANGEBYSCORE', k(c, 'gone'), '-inf', '(' .. str(r))
  end
end

if op == 'export' then
  local out = {}
  for _, c in ipairs(redis.call('SMEMBERS', colls)) do
    out[#out + 1] = {c, redis.call('ZRANGE', k(c, 'order'), 0, -1), redis.call('HGETALL', k(c, 'items'))}
  end
  return out
end

if op == 'forget' then
  -- A deleted sandbox: every key of it.
  for _, c in ipairs(redis.call('SMEMBERS', colls)) do drop(c) end
  redis.call('DEL', colls, held, marks, last_rev, cleared_at)
  return 'ok'
end

if op == 'restore' then
  -- ARGV[3]: the clearing's revision; then (collection, next id, n, then n (id, rev, at, json or
  -- '') quadruples) repeated. A collection restored but never touched is seeded with its
  -- examples when next touched (a restored or deleted object stays as it is).
  local cleared = tonumber(redis.call('GET', cleared_at) or '0')
  if tonumber(ARGV[3]) > cleared then
    cleared = tonumber(ARGV[3])
    redis.call('SET', cleared_at, ARGV[3])
    clear_before(cleared)
  end
  local top = tonumber(redis.call('GET', last_rev) or '0')
  local i = 4
  while i <= #ARGV do
    local c, next, n = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
    redis.call('SADD', colls, c)
    if next > tonumber(redis.call('HGET', marks, c) or '0') then redis.call('HSET', marks, c, ARGV[i + 1]) end
    local given = redis.call('HGET', k(c, 'meta'), 'next_id')
    if given and next > tonumber(given) then redis.call('HSET', k(c, 'meta'), 'next_id', ARGV[i + 1]) end
    restore(c, i + 3, i + 2 + 4 * n, cleared)
    for j = i + 4, i + 2 + 4 * n, 4 do
      if tonumber(ARGV[j]) > top then top = tonumber(ARGV[j]) end
    end
    i = i + 3 + 4 * n
  end
  redis.call('SET', last_rev, str(top))
  return 'ok'
end

if op == 'replace' then
  -- ARGV from 3: (collection, next id, n, then n (id, json) pairs) repeated.
  for _, c in ipairs(redis.call('SMEMBERS', colls)) do
    local next = redis.call('HGET', k(c, 'meta'), 'next_id')
    if next then
      local mark = tonumber(redis.call('HGET', marks, c) or '0')
      if tonumber(next) > mark then redis.call('HSET', marks, c, next) end
    end
    drop(c)
  end
  redis.call('DEL', colls, held)
  local r = rev()
  redis.call('SET', cleared_at, str(r))
  local i = 3
  while i <= #ARGV do
    local c, n = ARGV[i], tonumber(ARGV[i + 2])
    drop(c)
    seed(c, ARGV[i + 1], i + 3, i + 2 + 2 * n, r)
    i = i + 3 + 2 * n
  end
  return {'wrote', str(r)}
end

if op == 'seed' then
  if redis.call('EXISTS', meta) == 1 then return 'ok' end
  -- ARGV: the next sequential id, then (id, json) pairs.
  seed(coll, ARGV[3], 4, #ARGV)
  return 'ok'
end

if redis.call('EXISTS', meta) == 0 then return {'seed'} end

if op == 'ids' then
  -- ARGV[3]: how many sequential ids; answers the last.
  return redis.call('HINCRBY', meta, 'next_id', tonumber(ARGV[3])) - 1
end

if op == 'create' then
  -- ARGV: bound of objects, bound of bytes, then (id, json) pairs.
  local n, bytes = (#ARGV - 4) / 2, 0
  for i = 6, #ARGV, 2 do bytes = bytes + #ARGV[i] end
  local full = over(n, bytes)
  if full then return full end
  local r = rev()
  local out = {'wrote', str(r)}
  for i = 5, #ARGV, 2 do out[#out + 1] = put(coll, ARGV[i], ARGV[i + 1], r) end
  redis.call('HINCRBY', held, 'objects', n)
  redis.call('HINCRBY', held, 'bytes', bytes)
  return out
end

if op == 'upsert' then
  -- ARGV: bound of objects, bound of bytes, then (id, json) pairs: each written in place of
  -- the object of its id, or added.
  local n, bytes = 0, 0
  for i = 5, #ARGV, 2 do
    local old = redis.call('HGET', items, ARGV[i])
    if old then bytes = bytes + #ARGV[i + 1] - #old else n = n + 1; bytes = bytes + #ARGV[i + 1] end
  end
  local full = over(n, bytes)
  if full then return full end
  local r = rev()
  local out = {'wrote', str(r)}
  for i = 5, #ARGV, 2 do
    if redis.call('HEXISTS', items, ARGV[i]) == 1 then
      rewrite(coll, ARGV[i], ARGV[i + 1], r)
      out[#out + 1] = redis.call('ZSCORE', order, ARGV[i])
    else
      out[#out + 1] = put(coll, ARGV[i], ARGV[i + 1], r)
    end
  end
  redis.call('HINCRBY', held, 'objects', n)
  redis.call('HINCRBY', held, 'bytes', bytes)
  return out
end

if op == 'read' then
  return {'found', redis.call('HGET', items, ARGV[3])}
end

if op == 'list' then
  -- ARGV: offset, limit, then the ids of a filter (none: no filter, ARGV[5] absent).
  local offset, limit = tonumber(ARGV[3]), tonumber(ARGV[4])
  local ids, total = {}, 0
  if #ARGV >= 5 then
    local found = {}
    for i = 5, #ARGV do
      local s = redis.call('ZSCORE', order, ARGV[i])
      if s then found[#found + 1] = {tonumber(s), ARGV[i]} end
    end
    table.sort(found, function(a, b) return a[1] < b[1] end)
    total = #found
    for i = offset + 1, math.min(offset + limit, #found) do ids[#ids + 1] = found[i][2] end
  else
    total = redis.call('ZCARD', order)
    if limit > 0 and offset < total then
      ids = redis.call('ZRANGE', order, offset, offset + limit - 1)
    end
  end
  local out = {'listed', total}
  if #ids > 0 then
    for _, o in ipairs(redis.call('HMGET', items, unpack(ids))) do out[#out + 1] = o end
  end
  return out
end

if op == 'update' then
  -- ARGV: bound of bytes, then (id, what the caller read, what it writes) triples: written
  -- only if every object is still what was read.
  local delta = 0
  for i = 4, #ARGV, 3 do
    local now = redis.call('HGET', items, ARGV[i])
    if not now then return {'missing', ARGV[i]} end
    if now ~= ARGV[i + 1] then return {'changed', ARGV[i]} end
    delta = delta + #ARGV[i + 2] - #now
  end
  if count('bytes') + delta > tonumber(ARGV[3]) then
    return {'full', 'bytes', tostring(count('bytes') + delta), ARGV[3]}
  end
  local r = rev()
  local out = {'wrote', str(r)}
  for i = 4, #ARGV, 3 do
    rewrite(coll, ARGV[i], ARGV[i + 2], r)
    out[#out + 1] = redis.call('ZSCORE', order, ARGV[i])
  end
  redis.call('HINCRBY', held, 'bytes', delta)
  return out
end

if op == 'remove' then
  -- ARGV: ids; removes those it holds, answers the revision and them.
  local r = rev()
  local out = {'removed', str(r)}
  for i = 3, #ARGV do
    local o = redis.call('HGET', items, ARGV[i])
    if o then
      bury(coll, ARGV[i], r)
      redis.call('HINCRBY', held, 'objects', -1)
      redis.call('HINCRBY', held, 'bytes', -#o)
      out[#out + 1] = o
    end
  end
  return out
end

if op == 'remove_if' then
  -- ARGV: (id, what the caller read) pairs: all removed if each is still what was read.
  for i = 3, #ARGV, 2 do
    if redis.call('HGET', items, ARGV[i]) ~= ARGV[i + 1] then return {'changed', ARGV[i]} end
  end
  local r = rev()
  local out = {'removed', str(r)}
  for i = 3, #ARGV, 2 do
    bury(coll, ARGV[i], r)
    redis.call('HINCRBY', held, 'objects', -1)
    redis.call('HINCRBY', held, 'bytes', -#ARGV[i + 1])
    out[#out + 1] = ARGV[i + 1]
  end
  return out
end

if op == 'delete' then
  local o = redis.call('HGET', items, ARGV[3])
  if not o then return {'missing', ARGV[3]} end
  local r = rev()
  bury(coll, ARGV[3], r)
  redis.call('HINCRBY', held, 'objects', -1)
  redis.call('HINCRBY', held, 'bytes', -#o)
  return {'found', o, str(r)}
end

return redis.error_reply('unknown operation ' .. op)
