-- list_undelivered_*: the records of ARGV[1] ('ctx' or 'late') not yet delivered.
if redis.call('EXISTS', META) == 0 then
  return {'nf'}
end
local hash, zset = CTX, CTXD
if ARGV[1] == 'late' then
  hash, zset = LATE, LATED
end
local all = redis.call('HGETALL', hash)
local queued = {}
for i = 1, #all, 2 do
  if not redis.call('ZSCORE', zset, all[i]) then
    queued[#queued + 1] = all[i + 1]
  end
end
return {'ok', queued}
