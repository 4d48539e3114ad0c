-- record_compaction. ARGV[5..]: boundary, expected window start (-1: none),
-- 1 to preserve the session's history, the summary row JSON.
local boundary, expect, preserve, summary =
  tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7] == '1', ARGV[8]
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
local count = tonumber(redis.call('HGET', META, 'count'))
local start = 0
local last = redis.call('LINDEX', CMP, -1)
if last then
  start = cjson.decode(last).b
end
if (expect >= 0 and expect ~= start) or boundary <= start or boundary > count then
  return {'compaction', start, count}
end
local number = redis.call('RPUSH', CMP, cjson.encode({b = boundary, s = summary}))
if preserve then
  redis.call('HSET', META, 'pres', '1')
end
local reply = landed(next_activity(), 'LT')
reply[4] = number
reply[5] = redis.call('HGET', META, 'pres') or '0'
return reply
