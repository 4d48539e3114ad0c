-- add_pending_approvals, insert-once by id; a resolved id is never re-added.
-- ARGV[5..]: has fence, fence run id, then id / JSON pairs.
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
if ARGV[5] == '1' and not fence_ok(ARGV[6]) then
  return refuse('superseded')
end
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
