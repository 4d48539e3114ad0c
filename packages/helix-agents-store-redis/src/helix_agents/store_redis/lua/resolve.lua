-- resolve_approval: 'ok' for exactly one caller. ARGV[5]: approval id.
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
if redis.call('SISMEMBER', DONE, ARGV[5]) == 1 then
  return {'already'}
end
if redis.call('HDEL', APPR, ARGV[5]) == 0 then
  return refuse('approval_not_found')
end
redis.call('SADD', DONE, ARGV[5])
return landed(next_activity(), 'LT')
