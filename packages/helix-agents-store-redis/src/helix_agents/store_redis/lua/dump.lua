-- ARGV[1]: the want's JSON. The session's snapshot and every record no snapshot returns
-- (docs/export.md, EXP-2), read at once: run ids, queue entries and their deliveries,
-- resolved approval ids, commit ids, stored outputs, compactions. False when it is gone.
local snap = snapshot(cjson.decode(ARGV[1]))
if not snap then return false end
return {
  snap,
  redis.call('SMEMBERS', RUNS),
  redis.call('HGETALL', Q),
  redis.call('ZRANGE', QD, 0, -1, 'WITHSCORES'),
  redis.call('SMEMBERS', DONE),
  redis.call('HGETALL', CMT),
  redis.call('HGETALL', OUT),
  redis.call('LRANGE', CMP, 0, -1),
}
