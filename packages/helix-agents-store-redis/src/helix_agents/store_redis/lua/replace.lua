-- replace_messages. Named ARGV slots: REPLACE of _schema.py; then the n rows
-- ('c' or 'm' + JSON) from ARGV[REST] on. The client checked keep (0..expected)
-- and the rows; here, in order: the session, the fence, the expected count,
-- retention. Then the cut (as a truncate) and the rows at index keep.
local refusal = refused(fenced, fence)
if refusal then return refusal end
local m = redis.call('HMGET', META, 'count', 'first', 'ui', 'la', 'ukey')
local count, first = tonumber(m[1]), tonumber(m[2])
if expect ~= count then
  return refuse('count_conflict')
end
if keep < first then
  return refuse('retention')
end
local ui = tonumber(m[3]) - cut(keep, first, count) + n_ui
push_rows(REST, n)
count = keep + n
-- Retention keeps the newest max_messages rows; indexes stay absolute.
if max_messages > 0 and count - first > max_messages then
  archive(count - first - max_messages, first)
  redis.call('LTRIM', ROWS, count - first - max_messages, -1)
  first = count - max_messages
end
redis.call('HSET', META, 'count', count, 'first', first, 'ui', ui)
return landed(next_activity(m[4]), 'LT', m[5])
