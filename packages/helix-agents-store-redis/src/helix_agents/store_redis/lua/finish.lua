-- finish_run. ARGV[5..]: run id, status (checked by the client).
local refusal = refused(true, ARGV[5])
if refusal then return refusal end
redis.call('HSET', META, 'run_status', ARGV[6], 'run_ended', int(NOW))
return landed(next_activity(), 'LT')
