-- APIStend learned quotas, Redis side; the memory twin is `LearnedTable` in learned.rs.
-- KEYS[1]  a hash: b burst, i interval µs, u upper rate, l lower rate, t decided (ms), f from
--          headers (1/0)
-- ARGV[1]  op: r = read, w = merge and write
-- ARGV[2..7] for w: b, i, u ('' for none), l ('' for none), t, f;  ARGV[8] for w: ttl in ms
-- Returns {b, i, u, l, t, f} (false for a missing field), or nil when there is no record.
local key, op = KEYS[1], ARGV[1]
local cur = redis.call('HMGET', key, 'b', 'i', 'u', 'l', 't', 'f')
if op == 'r' then
  if not cur[1] then return nil end
  return cur
end
local b, i, u, l, t, f = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
if cur[1] then
  -- The strictest evidence wins: the lowest upper bound, the highest lower bound.
  if cur[3] and (u == '' or tonumber(cur[3]) < tonumber(u)) then u = cur[3] end
  if cur[4] and (l == '' or tonumber(cur[4]) > tonumber(l)) then l = cur[4] end
  -- The newer decision's quota.
  if tonumber(cur[5]) > tonumber(t) then b, i, t, f = cur[1], cur[2], cur[5], cur[6] end
end
redis.call('DEL', key)
redis.call('HSET', key, 'b', b, 'i', i, 't', t, 'f', f)
if u ~= '' then redis.call('HSET', key, 'u', u) end
if l ~= '' then redis.call('HSET', key, 'l', l) end
redis.call('PEXPIRE', key, ARGV[8])
return {b, i, u ~= '' and u or false, l ~= '' and l or false, t, f}
