-- append_messages' common case: rows, perhaps a commit id, an expected count and a
-- fence on the live run; no run start, deliveries or scoped state, no idle TTL. It is
-- lua/commit.lua's checks and writes for that case, in the same order, on only the
-- keys it touches (APPEND_KEYS of _schema.py, named by the prelude), so it costs less
-- to send and to run. The named ARGV slots are APPEND; the n rows follow from REST.
-- Replies as commit.lua does; {'full'}, before any write, when the session's keys
-- carry a deadline the write would drop (commit.lua, which names every key, does that).
local m = redis.call('HMGET', META, 'count', 'first', 'ui', 'la', 'ukey', 'created',
  'run_id', 'run_status')
if not m[1] then
  return {'session_not_found'}
end
local count, first, ui = tonumber(m[1]), tonumber(m[2]), tonumber(m[3])
if has_cid then
  local landed_as = redis.call('HGET', CMT, cid)
  if landed_as then
    return replay(landed_as, m[4], m[5])
  end
end
-- commit.lua's refuse_commit with no run starting and no deliveries: one extra, 0.
if fenced and not (m[7] == fence and m[8] == 'live') then
  return refuse('superseded', 0)
end
if expect >= 0 and expect ~= count then
  return refuse('count_conflict', 0)
end
if TTL > 0 or redis.call('PTTL', META) ~= -1 then
  return {'full'}
end

local base = count
push_rows(REST, n)
count = count + n
ui = ui + n_ui
if has_cid then
  redis.call('HSET', CMT, cid, int(base) .. ':' .. int(count))
  redis.call('ZADD', CMTN, count, cid)
end
first = retain(max_messages, count, first)
local done = landed(next_activity(m[4]), 'LT', m[5], {'count', count, 'first', first, 'ui', ui},
  m[6], count)
return commit_reply({first_index = int(base), message_count = int(count), replayed = 0,
  last_activity = int(done[2]), user_key = done[3]})
