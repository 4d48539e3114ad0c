-- store_output. ARGV[5..]: output id, has key, caller key, reference JSON, content.
-- A key that already stored an output replies with that output's reference.
local oid, has_key, key, ref, content = ARGV[5], ARGV[6] == '1', ARGV[7], ARGV[8], ARGV[9]
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
if has_key then
  local first = redis.call('HGET', OUTK, key)
  if first then
    return {'replayed', redis.call('HGET', OUTR, first)}
  end
  redis.call('HSET', OUTK, key, oid)
end
redis.call('HSET', OUT, oid, content)
redis.call('HSET', OUTR, oid, ref)
return landed(next_activity(), 'LT')
