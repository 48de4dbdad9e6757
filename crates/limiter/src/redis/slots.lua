-- APIStend concurrency slots, Redis side; the memory twin is `SlotTable` in slots.rs.
-- KEYS[1]  a sorted set: lease id -> the time its lease runs out (µs)
-- ARGV[1]  op: a = take a slot, n = renew, r = release
-- ARGV[2]  the lease id
-- ARGV[3]  max slots        ARGV[4] lease in µs
-- ARGV[5]  now in µs since the Unix epoch, or '' to read Redis TIME
-- Returns 1 when taken / renewed / released, 0 otherwise.
local key, op, id = KEYS[1], ARGV[1], ARGV[2]
local max, ttl = tonumber(ARGV[3]), tonumber(ARGV[4])
local now
if ARGV[5] == '' then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
else
  now = tonumber(ARGV[5])
end
local function fmt(x) return string.format('%.0f', x) end
if op == 'r' then
  redis.call('ZREM', key, id)
  return 1
end
redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(now))
local until_us = now + ttl
-- The set lives as long as its latest lease (plus a second of slack).
local keep_ms = math.floor(ttl / 1000) + 1000
if op == 'a' then
  if redis.call('ZCARD', key) >= max then
    return 0
  end
  redis.call('ZADD', key, fmt(until_us), id)
  redis.call('PEXPIRE', key, keep_ms)
  return 1
end
-- renew: only a lease that is still there
if not redis.call('ZSCORE', key, id) then
  return 0
end
redis.call('ZADD', key, 'XX', fmt(until_us), id)
redis.call('PEXPIRE', key, keep_ms)
return 1
