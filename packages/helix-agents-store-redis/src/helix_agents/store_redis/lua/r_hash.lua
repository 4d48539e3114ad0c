-- Approvals or checkpoints (ARGV[1] = 'appr' or 'ckpt'): every value, or the one
-- under ARGV[2] when given.
if redis.call('EXISTS', META) == 0 then
  return {'nf'}
end
local hash = APPR
if ARGV[1] == 'ckpt' then
  hash = CKPT
end
if ARGV[2] then
  return {'ok', {redis.call('HGET', hash, ARGV[2])}}
end
return {'ok', redis.call('HVALS', hash)}
