-- finish_run. ARGV[5..]: run id, status (checked by the client).
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
if not fence_ok(ARGV[5]) then
  return refuse('superseded')
end
redis.call('HSET', META, 'run_status', ARGV[6], 'run_ended', int(NOW))
return landed(next_activity(), 'LT')
