-- append_messages' common case: rows, perhaps a commit id, an expected count and a
-- fence on the live run; no run start, deliveries or scoped state, no idle TTL. It is
-- lua/commit.lua's checks and writes for that case, in the same order, on only the
-- keys it touches (APPEND_KEYS of _schema.py, named by the prelude), so it costs less
-- to send and to run. The named ARGV slots are APPEND; the n rows follow from REST.
-- Replies as commit.lua does; {'full'}, before any write, when the session's keys
-- carry a deadline the write would drop (commit.lua, which names every key, does that).
local m, early = commit_start(has_cid, cid, 'run_id', 'run_status')
if early then
  return early
end
local count, first, ui = tonumber(m[1]), tonumber(m[2]), tonumber(m[3])
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
return commit_landed(m, base, count, first, ui)
