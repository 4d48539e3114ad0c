-- pop_messages. Named ARGV slots: POP of _schema.py (want, fenced, fence). Removes the newest rows retention kept (core.pop_keep) and what
-- hung on them, as a truncate does. Landed: {'ok', activity, user index key,
-- the removed rows joined by newlines}; nothing to remove: {'none'}, no write.
local refusal = refused(fenced, fence)
if refusal then return refusal end
local m = redis.call('HMGET', META, 'count', 'first', 'ui', 'la', 'ukey')
local count, first = tonumber(m[1]), tonumber(m[2])
local keep = count - math.min(want, count - first)
if keep == count then
  return {'none'}
end
local rows = table.concat(redis.call('LRANGE', ROWS, keep - first, -1), '\n')
local ui = tonumber(m[3]) - cut(keep, first, count)
redis.call('HSET', META, 'count', keep, 'ui', ui)
local reply = landed(next_activity(m[4]), 'LT', m[5])
reply[#reply + 1] = rows
return reply
