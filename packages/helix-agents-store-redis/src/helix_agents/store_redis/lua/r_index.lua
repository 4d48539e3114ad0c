-- list_sessions, step 1 (standalone): up to ARGV[1] entries of the user's index
-- after a position, as {ties, rest}, each a flat member/score array. ARGV[2] is
-- the position's score ('' = from the start); ties are the entries at exactly
-- that score (the client keeps those after the position's id). KEYS: the index.
local need = tonumber(ARGV[1])
if ARGV[2] == '' then
  return {{}, redis.call('ZRANGE', KEYS[1], '-inf', '+inf', 'BYSCORE', 'LIMIT', 0, need, 'WITHSCORES')}
end
return {redis.call('ZRANGE', KEYS[1], ARGV[2], ARGV[2], 'BYSCORE', 'WITHSCORES'),
  redis.call('ZRANGE', KEYS[1], '(' .. ARGV[2], '+inf', 'BYSCORE', 'LIMIT', 0, need, 'WITHSCORES')}
