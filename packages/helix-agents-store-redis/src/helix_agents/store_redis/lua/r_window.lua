-- get_window: the latest compaction and the retained rows from its boundary on.
-- KEYS: meta, rows, cmp. Reply: 'ok', number of compactions, latest compaction
-- JSON (or ''), preserved flag, then the rows.
local META, ROWS, CMP = KEYS[1], KEYS[2], KEYS[3]
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
local first = tonumber(redis.call('HGET', META, 'first'))
local number = redis.call('LLEN', CMP)
local last = redis.call('LINDEX', CMP, -1) or ''
local start = 0
if last ~= '' then
  start = cjson.decode(last).b
end
local out = {'ok', number, last, redis.call('HGET', META, 'pres') or '0'}
for _, row in ipairs(redis.call('LRANGE', ROWS, math.max(start - first, 0), -1)) do
  out[#out + 1] = row
end
return out
