-- get_messages: the retained rows, or the last ARGV[1] of them (-1 = all).
if redis.call('EXISTS', META) == 0 then
  return {'nf'}
end
local limit = tonumber(ARGV[1])
if limit == 0 then
  return {'ok', {}}
end
local from = 0
if limit > 0 and limit < redis.call('LLEN', ROWS) then
  from = -limit
end
return {'ok', redis.call('LRANGE', ROWS, from, -1)}
