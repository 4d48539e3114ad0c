-- page_checkpoints. ARGV[5..]: lowest id, id to stay below ('' = none), limit.
-- Ids come from CKPTL, where every id has score 0 and so sorts by its bytes.
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
if redis.call('ZCARD', CKPTL) ~= redis.call('HLEN', CKPT) then
  -- Every write that adds a checkpoint adds its id, so a count that differs means
  -- data from before the index (or a write that forgot it): rebuild it once.
  redis.call('DEL', CKPTL)
  local ids = redis.call('HKEYS', CKPT)
  for i = 1, #ids, 500 do
    local args = {}
    for j = i, math.min(i + 499, #ids) do
      args[#args + 1] = 0
      args[#args + 1] = ids[j]
    end
    redis.call('ZADD', CKPTL, unpack(args))
  end
  local ttl = redis.call('PTTL', META)
  if ttl > 0 then
    redis.call('PEXPIRE', CKPTL, ttl)
  end
end
local high = '+'
if ARGV[6] ~= '' then
  high = '(' .. ARGV[6]
end
local out = {'ok'}
for _, id in ipairs(redis.call('ZREVRANGEBYLEX', CKPTL, high, '[' .. ARGV[5], 'LIMIT', 0,
    tonumber(ARGV[7]))) do
  out[#out + 1] = redis.call('HGET', CKPT, id)
end
return out
