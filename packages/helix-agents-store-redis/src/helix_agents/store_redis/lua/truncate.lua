-- truncate_messages. Named ARGV slots: TRUNCATE of _schema.py (keep, fenced, fence).
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
local m = redis.call('HMGET', META, 'count', 'first', 'ui')
local count, first = tonumber(m[1]), tonumber(m[2])
if keep < 0 or keep > count then
  return refuse('invalid')
end
if fenced and not fence_ok(fence) then
  return refuse('superseded')
end
if keep < first then
  return refuse('retention', keep)
end
local ui = tonumber(m[3]) - cut(keep, first, count)
redis.call('HSET', META, 'count', keep, 'ui', ui)
return landed(next_activity(), 'LT')
