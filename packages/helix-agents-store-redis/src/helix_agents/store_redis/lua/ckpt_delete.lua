-- delete_checkpoints. ARGV[5..]: the ids. Replies 'none' when none existed.
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
local gone = 0
for i = 5, #ARGV do
  if redis.call('HDEL', CKPT, ARGV[i]) == 1 then
    gone = gone + 1
    redis.call('ZREM', CKPTN, ARGV[i])
    redis.call('ZREM', CKPTL, ARGV[i])
  end
end
if gone == 0 then
  return {'none'}
end
local reply = landed(next_activity(), 'LT')
reply[#reply + 1] = gone
return reply
