-- delete_session: every key of the session, and (inline) its listing entry.
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
-- App and user deltas still in the journal are applied first (the client retries).
if redis.call('HLEN', SCSJ) > 0 then
  return {'pending'}
end
local m = redis.call('HMGET', META, 'la', 'ukey')
redis.call('DEL', unpack(KEYS))
if m[2] and INLINE then
  index_drop(m[2], summary_key(m[2]), SID, -tonumber(m[1]))
end
return {'ok', tonumber(m[1]), m[2] or ''}
