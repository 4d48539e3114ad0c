-- The source half of clone_session: rows [first, up_to) and the checkpoints in
-- range, read in one consistent step. ARGV[1]: up_to (-1 = every row).
-- KEYS: meta, rows, ckpt, ckptn.
local META, ROWS, CKPT, CKPTN = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
local m = redis.call('HMGET', META, 'first', 'count', 'ui', 'user', 'md')
local first, count, ui = tonumber(m[1]), tonumber(m[2]), tonumber(m[3])
local up_to = tonumber(ARGV[1])
if up_to < 0 then
  up_to = count
end
if up_to < first or up_to > count then
  return {'invalid', first, count}
end
local rows = {}
if up_to > first then
  rows = redis.call('LRANGE', ROWS, 0, up_to - first - 1)
end
if up_to < count then
  for _, row in ipairs(redis.call('LRANGE', ROWS, up_to - first, -1)) do
    if string.sub(row, 1, 1) ~= 'c' then
      ui = ui - 1
    end
  end
end
local checkpoints = {}
local ids = redis.call('ZRANGEBYSCORE', CKPTN, '-inf', up_to, 'WITHSCORES')
for i = 1, #ids, 2 do
  checkpoints[#checkpoints + 1] = ids[i]
  checkpoints[#checkpoints + 1] = ids[i + 1]
  checkpoints[#checkpoints + 1] = redis.call('HGET', CKPT, ids[i])
end
return {'ok', first, count, ui, m[4], m[5], rows, checkpoints}
