-- list_undelivered_*: the queued records not yet delivered.
-- KEYS: meta, then the queue's hash (ctx or late) and its delivered sorted set.
local META, HASH, ZSET = KEYS[1], KEYS[2], KEYS[3]
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
local all = redis.call('HGETALL', HASH)
local queued = {}
for i = 1, #all, 2 do
  if not redis.call('ZSCORE', ZSET, all[i]) then
    queued[#queued + 1] = all[i + 1]
  end
end
return {'ok', queued}
