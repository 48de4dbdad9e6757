-- A sandbox's objects in Redis. KEYS[1] is the sandbox's prefix, apistend:{o:SANDBOX}: every key
-- of the sandbox is below it and carries its hash tag, so a sandbox's objects live in one
-- Cluster slot and one call changes them atomically. ARGV[1] is the operation, ARGV[2] the
-- collection ("service/name"); the rest is the operation's. A collection that has never been
-- touched (no meta hash) answers {"seed"}: the caller sends its first objects and asks again.
local p = KEYS[1]
local op = ARGV[1]
local coll = ARGV[2]
local held = p .. ':held'
local colls = p .. ':colls'
-- The next sequential id of each collection ever touched: kept through a reset, so that no id
-- is given twice.
local marks = p .. ':marks'
local function k(c, what) return p .. ':c:' .. c .. ':' .. what end
local items, order, meta = k(coll, 'items'), k(coll, 'order'), k(coll, 'meta')

local function put(c, id, json)
  local at = redis.call('HINCRBY', k(c, 'meta'), 'next_at', 1)
  redis.call('ZADD', k(c, 'order'), at, id)
  redis.call('HSET', k(c, 'items'), id, json)
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
  redis.call('DEL', k(c, 'items'), k(c, 'order'), k(c, 'meta'))
end

-- Starts collection c at sequential id next (or after the ids it gave before) with the
-- (id, json) pairs of ARGV[from..to].
local function seed(c, next, from, to)
  local mark = tonumber(redis.call('HGET', marks, c) or '0')
  if mark > tonumber(next) then next = mark end
  redis.call('HSET', k(c, 'meta'), 'next_id', next, 'next_at', 0)
  redis.call('SADD', colls, c)
  local n, bytes = 0, 0
  for i = from, to, 2 do
    if redis.call('HEXISTS', k(c, 'items'), ARGV[i]) == 0 then
      put(c, ARGV[i], ARGV[i + 1])
      n = n + 1
      bytes = bytes + #ARGV[i + 1]
    end
  end
  redis.call('HINCRBY', held, 'objects', n)
  redis.call('HINCRBY', held, 'bytes', bytes)
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
  redis.call('DEL', colls, held, marks)
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
  local i = 3
  while i <= #ARGV do
    local c, n = ARGV[i], tonumber(ARGV[i + 2])
    drop(c)
    seed(c, ARGV[i + 1], i + 3, i + 2 + 2 * n)
    i = i + 3 + 2 * n
  end
  return 'ok'
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
  for i = 5, #ARGV, 2 do put(coll, ARGV[i], ARGV[i + 1]) end
  redis.call('HINCRBY', held, 'objects', n)
  redis.call('HINCRBY', held, 'bytes', bytes)
  return 'ok'
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
  for i = 5, #ARGV, 2 do
    if redis.call('HEXISTS', items, ARGV[i]) == 1 then
      redis.call('HSET', items, ARGV[i], ARGV[i + 1])
    else
      put(coll, ARGV[i], ARGV[i + 1])
    end
  end
  redis.call('HINCRBY', held, 'objects', n)
  redis.call('HINCRBY', held, 'bytes', bytes)
  return 'ok'
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
  for i = 4, #ARGV, 3 do redis.call('HSET', items, ARGV[i], ARGV[i + 2]) end
  redis.call('HINCRBY', held, 'bytes', delta)
  return 'ok'
end

if op == 'remove' then
  -- ARGV: ids; removes those it holds, answers them.
  local out = {'removed'}
  for i = 3, #ARGV do
    local o = redis.call('HGET', items, ARGV[i])
    if o then
      redis.call('HDEL', items, ARGV[i])
      redis.call('ZREM', order, ARGV[i])
      redis.call('HINCRBY', held, 'objects', -1)
      redis.call('HINCRBY', held, 'bytes', -#o)
      out[#out + 1] = o
    end
  end
  return out
end

if op == 'delete' then
  local o = redis.call('HGET', items, ARGV[3])
  if not o then return {'missing', ARGV[3]} end
  redis.call('HDEL', items, ARGV[3])
  redis.call('ZREM', order, ARGV[3])
  redis.call('HINCRBY', held, 'objects', -1)
  redis.call('HINCRBY', held, 'bytes', -#o)
  return {'found', o}
end

return redis.error_reply('unknown operation ' .. op)
