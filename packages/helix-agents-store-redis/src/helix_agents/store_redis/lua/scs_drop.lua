-- Scoped state, step 5 (the map's slot): forget a sealed writer, unless it announced
-- itself again since (its token moved), and retire it: its applied mark goes once it has
-- been retired for the retention, with those of up to 16 writers retired before it.
-- KEYS: writers, marks, retired. ARGV: session id, token, retention in ms.
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call('HDEL', KEYS[1], ARGV[1])
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZADD', KEYS[3], ms, ARGV[1])
local due = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ms - tonumber(ARGV[3]), 'LIMIT', 0, 16)
for _, session in ipairs(due) do
  -- A writer again keeps its mark, even if an announce that did not un-retire it
  -- (a store of an earlier version) left it in the retired set.
  if redis.call('HEXISTS', KEYS[1], session) == 0 then
    redis.call('HDEL', KEYS[2], session)
  end
  redis.call('ZREM', KEYS[3], session)
end
return 1
