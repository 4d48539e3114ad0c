-- add_pending_approvals, insert-once by id; a resolved id is never re-added.
-- ARGV[5..]: has fence, fence run id, then id / JSON pairs.
local refusal = refused(ARGV[5] == '1', ARGV[6])
if refusal then return refusal end
local added = false
for i = 7, #ARGV, 2 do
  if redis.call('SISMEMBER', DONE, ARGV[i]) == 0 and redis.call('HSETNX', APPR, ARGV[i], ARGV[i + 1]) == 1 then
    added = true
  end
end
if not added then
  return {'noop'}
end
return landed(next_activity(), 'LT')
