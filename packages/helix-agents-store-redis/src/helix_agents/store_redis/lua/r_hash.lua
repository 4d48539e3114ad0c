-- Approvals or checkpoints: every value, or the one under ARGV[1] when given.
-- KEYS: meta, then the hash (appr or ckpt).
local META, HASH = KEYS[1], KEYS[2]
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
if ARGV[1] then
  return {'ok', {redis.call('HGET', HASH, ARGV[1])}}
end
return {'ok', redis.call('HVALS', HASH)}
