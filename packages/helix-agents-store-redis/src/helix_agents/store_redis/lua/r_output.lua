-- An output's reference, and its content when ARGV[2] is '1'.
-- KEYS: meta, outr, out. ARGV[1]: output id.
local META, OUTR, OUT = KEYS[1], KEYS[2], KEYS[3]
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
local ref = redis.call('HGET', OUTR, ARGV[1])
if not ref then
  return {'none'}
end
if ARGV[2] == '1' then
  return {'ok', ref, redis.call('HGET', OUT, ARGV[1])}
end
return {'ok', ref}
