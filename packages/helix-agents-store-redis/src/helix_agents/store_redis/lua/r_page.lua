-- page_messages. ARGV: order, start index (-1 = from the end the order starts at), limit.
if redis.call('EXISTS', META) == 0 then
  return {'nf'}
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
return {'ok', lo, hi, first, count, rows}
