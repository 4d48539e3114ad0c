-- page_messages. ARGV: order, start index (-1 = from the end the order starts at), limit.
-- One string: 'lo:hi:first:count', then the rows, joined by newlines (as r_tail).
-- Nil when the session does not exist. KEYS: meta, rows.
-- The window below is a copy of core's page_window: it needs the session's first
-- retained index and count, which only this read sees (one round trip, and no
-- retention in between). The client recomputes core's window from the
-- first:count this returns and raises a drift on any difference (_page.py).
local META, ROWS = KEYS[1], KEYS[2]
if redis.call('EXISTS', META) == 0 then
  return false
end
local m = redis.call('HMGET', META, 'first', 'count')
local first, count = tonumber(m[1]), tonumber(m[2])
local start, limit = tonumber(ARGV[2]), tonumber(ARGV[3])
local lo, hi
if ARGV[1] == 'asc' then
  lo = first
  if start >= 0 then lo = math.max(first, start) end
  hi = math.min(count, lo + limit)
else
  hi = count
  if start >= 0 then hi = math.min(count, start) end
  lo = math.max(first, hi - limit)
end
local rows = {}
if hi > lo then
  rows = redis.call('LRANGE', ROWS, lo - first, hi - first - 1)
end
table.insert(rows, 1, string.format('%d:%d:%d:%d', lo, hi, first, count))
return table.concat(rows, '\n')
