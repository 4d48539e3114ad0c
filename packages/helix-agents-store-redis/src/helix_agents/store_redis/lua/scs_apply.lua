-- Scoped state, step 3 (the map's slot): apply one journal entry of a session to the
-- map, once. KEYS: map, marks. ARGV: session id, sequence, then key / JSON pairs.
-- An entry at or below the session's mark was applied already: nothing is done.
local seq = tonumber(ARGV[2])
local mark = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if seq <= mark then
  return 0
end
if #ARGV > 2 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 3))
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
