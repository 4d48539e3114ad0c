-- The per-user listing index: one sorted set per user; member = session id,
-- score = -last_activity_at in microseconds, so ascending order is newest
-- first and ties fall back to the member (the id), as list_sessions wants.

-- Standalone only (the write's INLINE step): beside the index, under the same
-- hash tag, a hash of each listed session's summary, session id ->
-- 'deadline,created,last_activity,count,pending_approvals' (deadline: the ms
-- time the session's keys expire at, 0 = never), rewritten by every landed
-- write, so a listing page is one read (lua/r_index.lua).
local function summary_key(ukey)
  return ukey .. ':sum' -- as _keys.summaries_of
end

-- A page asks the summaries for ~20 sessions, newest first: the fields the
-- last written. In a listpack (a small hash's encoding) each is found by a scan
-- from the start, 15 us a page at 100 sessions against 1.5 us in a hashtable.
-- Past SUMMARIES_SCANNED sessions, so, the hash becomes a hashtable: a field
-- longer than any listpack holds (hash-max-listpack-value, 64 by default)
-- converts it, and the server never converts it back. Only a new session's
-- summary checks this; the field is gone again at once ('' is no session id).
local SUMMARIES_SCANNED = 16
local function to_hashtable(skey)
  if redis.call('HLEN', skey) > SUMMARIES_SCANNED then
    redis.call('HSET', skey, '', string.rep('-', 65))
    redis.call('HDEL', skey, '')
  end
end

-- The index (and its summaries) live as long as the latest-written of its sessions.
local function keep_alive(key, ttl, fresh)
  if ttl > 0 then
    if fresh then
      redis.call('PEXPIRE', key, ttl)
    else
      redis.call('PEXPIRE', key, ttl, 'GT')
    end
  else
    redis.call('PERSIST', key)
  end
end

local function index_set(ukey, sid, score, mode, ttl)
  local fresh = ttl > 0 and redis.call('EXISTS', ukey) == 0
  if mode == 'LT' then
    redis.call('ZADD', ukey, 'LT', string.format('%d', score), sid)
  else
    redis.call('ZADD', ukey, string.format('%d', score), sid)
  end
  keep_alive(ukey, ttl, fresh)
end

-- Remove the entry only if it still carries the score the caller saw, so a
-- newer incarnation of the session (or a newer write) is never dropped; its
-- summary (in `skey`) goes with it.
local function index_drop(ukey, skey, sid, score)
  local seen = redis.call('ZSCORE', ukey, sid)
  if seen and tonumber(seen) == score then
    redis.call('ZREM', ukey, sid)
    redis.call('HDEL', skey, sid)
  end
end
