-- get_messages: the retained rows, or the last ARGV[1] of them (-1 = all), as
-- one string, rows joined by newlines (a row's JSON never holds a raw newline):
-- one bulk reply is much cheaper for the client to read than an array.
-- Nil when the session does not exist. KEYS: meta, rows.
local META, ROWS = KEYS[1], KEYS[2]
if redis.call('EXISTS', META) == 0 then
  return false
end
local limit = tonumber(ARGV[1])
if limit == 0 then
  return ''
end
local from = 0
if limit > 0 then
  from = -limit -- LRANGE clamps a start before the first row
end
return table.concat(redis.call('LRANGE', ROWS, from, -1), '\n')
