-- The per-user listing index: one sorted set per user; member = session id,
-- score = -last_activity_at in microseconds, so ascending order is newest
-- first and ties fall back to the member (the id), as list_sessions wants.

local function index_set(ukey, sid, score, mode, ttl)
  local fresh = ttl > 0 and redis.call('EXISTS', ukey) == 0
  if mode == 'LT' then
    redis.call('ZADD', ukey, 'LT', string.format('%d', score), sid)
  else
    redis.call('ZADD', ukey, string.format('%d', score), sid)
  end
  -- The index lives as long as the latest-written of its sessions.
  if ttl > 0 then
    if fresh then
      redis.call('PEXPIRE', ukey, ttl)
    else
      redis.call('PEXPIRE', ukey, ttl, 'GT')
    end
  else
    redis.call('PERSIST', ukey)
  end
end

-- Remove the entry only if it still carries the score the caller saw, so a
-- newer incarnation of the session (or a newer write) is never dropped.
local function index_drop(ukey, sid, score)
  local seen = redis.call('ZSCORE', ukey, sid)
  if seen and tonumber(seen) == score then
    redis.call('ZREM', ukey, sid)
  end
end
