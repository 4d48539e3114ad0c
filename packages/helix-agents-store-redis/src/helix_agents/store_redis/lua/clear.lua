-- clear_session: rows and queues go; the session, its user, metadata and used
-- run ids stay; a live run ends as cancelled.
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
redis.call('DEL', ROWS, CTX, CTXD, LATE, LATED, APPR, DONE, CKPT, CKPTN, CKPTL, CMT, CMTN)
redis.call('DEL', OUT, OUTR, OUTK, CMP, ARCH, SCS)
redis.call('HDEL', META, 'pres', 'arch0')
redis.call('HSET', META, 'first', 0, 'count', 0, 'ui', 0)
if redis.call('HGET', META, 'run_status') == 'live' then
  redis.call('HSET', META, 'run_status', 'cancelled', 'run_ended', int(NOW))
end
return landed(next_activity(), 'LT')
