-- save_checkpoint, insert-once by id.
-- ARGV[5..]: has fence, fence run id, checkpoint id, its message_count, JSON.
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
if tonumber(ARGV[8]) > tonumber(redis.call('HGET', META, 'count')) then
  return refuse('invalid')
end
if ARGV[5] == '1' and not fence_ok(ARGV[6]) then
  return refuse('superseded')
end
if redis.call('HSETNX', CKPT, ARGV[7], ARGV[9]) == 0 then
  return {'noop'}
end
redis.call('ZADD', CKPTN, ARGV[8], ARGV[7])
redis.call('ZADD', CKPTL, 0, ARGV[7])
return landed(next_activity(), 'LT')
