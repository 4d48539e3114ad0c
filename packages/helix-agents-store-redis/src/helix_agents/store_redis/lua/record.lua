-- record_context_item / record_late_answer, insert-once by key.
-- ARGV[5..]: has fence, fence run id, 'ctx' or 'late', key, record JSON.
local refusal = refused(ARGV[5] == '1', ARGV[6])
if refusal then return refusal end
local hash = CTX
if ARGV[7] == 'late' then
  hash = LATE
end
if redis.call('HSETNX', hash, ARGV[8], ARGV[9]) == 0 then
  return {'noop'}
end
return landed(next_activity(), 'LT')
