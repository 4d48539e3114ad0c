-- replace_messages. ARGV[5]: keep, expected count, has fence, max_messages (0
-- none), row count n, non-context row count, ':'-separated; ARGV[6]: fence run
-- id; then the n rows ('c' or 'm' + JSON). The client checked keep (0..expected)
-- and the rows; here, in order: the session, the fence, the expected count,
-- retention. Then the cut (as a truncate) and the rows at index keep.
local h = {}
for v in string.gmatch(ARGV[5], '[^:]+') do
  h[#h + 1] = tonumber(v)
end
local keep, expect, fenced, max_messages, n, n_ui = h[1], h[2], h[3] == 1, h[4], h[5], h[6]
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
if fenced and not fence_ok(ARGV[6]) then
  return refuse('superseded')
end
local m = redis.call('HMGET', META, 'count', 'first', 'ui', 'la', 'ukey')
local count, first = tonumber(m[1]), tonumber(m[2])
if expect ~= count then
  return refuse('count_conflict')
end
if keep < first then
  return refuse('retention')
end
local ui = tonumber(m[3]) - cut(keep, first, count) + n_ui
push_rows(7, n)
count = keep + n
-- Retention keeps the newest max_messages rows; indexes stay absolute.
if max_messages > 0 and count - first > max_messages then
  archive(count - first - max_messages, first)
  redis.call('LTRIM', ROWS, count - first - max_messages, -1)
  first = count - max_messages
end
redis.call('HSET', META, 'count', count, 'first', first, 'ui', ui)
return landed(next_activity(m[4]), 'LT', m[5])
