-- Shared by every session write, after the generated prelude (_schema.py): the
-- session's KEYS by name (META, ROWS, ...), and SID, NOW, TTL, INLINE of ARGV.

local function int(n)
  return string.format('%d', n)
end

-- A refusal: the code, then the state the client needs to raise core's error
-- (the meta fields REFUSAL_STATE, in that order), then the script's extras.
local function refuse(code, ...)
  local out = {code}
  local state = redis.call('HMGET', META, unpack(REFUSAL_STATE))
  for i = 1, #REFUSAL_STATE do
    out[#out + 1] = state[i]
  end
  for _, extra in ipairs({...}) do
    out[#out + 1] = extra
  end
  return out
end

-- The reply of a landed or replayed commit (lua/commit.lua, lua/append.lua): the fields
-- COMMIT_REPLY in one ':'-joined string (redis-py reads one string much faster than an array).
local function commit_reply(fields)
  local out = {}
  for i, field in ipairs(COMMIT_REPLY) do
    out[i] = tostring(fields[field])
  end
  return table.concat(out, ':')
end


local function fence_ok(run_id)
  local run = redis.call('HMGET', META, 'run_id', 'run_status')
  return run[1] == run_id and run[2] == 'live'
end

-- The start of a fenced write: the session must exist and, when `fenced`, `run_id`
-- must be its live run. Returns the reply of the refusal, or nil to go on.
local function refused(fenced, run_id)
  if redis.call('EXISTS', META) == 0 then
    return {'session_not_found'}
  end
  if fenced and not fence_ok(run_id) then
    return refuse('superseded')
  end
end

-- The activity time of a landed write: now, but strictly after the last one
-- (`known`: the stored time, when the caller has already read it).
local function next_activity(known)
  local prev = tonumber(known or redis.call('HGET', META, 'la'))
  if prev and NOW <= prev then
    return prev + 1
  end
  return NOW
end

-- Every key of the session gets the same deadline (or none), so it expires whole; but
-- a journal holding app or user deltas never expires: they landed, and the next reader
-- of their map applies them (docs/scoped-state.md, "Redis"; empty, the key is gone).
-- Returns the deadline (ms, as a string), or '0' for none.
local function expire_session()
  if TTL > 0 then
    local t = redis.call('TIME')
    local deadline = int(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + TTL)
    for i = 1, #KEYS do
      redis.call('PEXPIREAT', KEYS[i], deadline)
    end
    redis.call('PERSIST', SCSJ)
    return deadline
  elseif redis.call('PTTL', META) ~= -1 then
    -- All keys share one deadline or none, so the meta key speaks for them all.
    for i = 1, #KEYS do
      redis.call('PERSIST', KEYS[i])
    end
  end
  return '0'
end

-- The session's entry in its user's summaries (lua/_index.lua), as it is now
-- (`created`, `count`: the session's, when the caller knows them).
local function summary_set(ukey, la, deadline, created, count)
  local skey = summary_key(ukey)
  local fresh = TTL > 0 and redis.call('EXISTS', skey) == 0
  if not created then
    local m = redis.call('HMGET', META, 'created', 'count')
    created, count = m[1], m[2]
  end
  local summary = {deadline, created, int(la), count, redis.call('HLEN', APPR)}
  if redis.call('HSET', skey, SID, table.concat(summary, ',')) == 1 then
    to_hashtable(skey)
  end
  keep_alive(skey, TTL, fresh)
end

-- The end of every landed write: activity time, TTL, and the listing entry and
-- summary (`known_ukey`: the session's index key, when the caller has already read it;
-- `fields`: more meta field / value pairs to set in the same HSET; `created`, `count`:
-- the session's, when the caller knows them).
local function landed(la, mode, known_ukey, fields, created, count)
  local set = fields or {}
  set[#set + 1] = 'la'
  set[#set + 1] = int(la)
  redis.call('HSET', META, unpack(set))
  local deadline = expire_session()
  local ukey = known_ukey or redis.call('HGET', META, 'ukey')
  if ukey and INLINE then
    index_set(ukey, SID, -la, mode, TTL)
    summary_set(ukey, la, deadline, created, count)
  end
  return {'ok', la, ukey or ''}
end

-- Remove rows from index `keep` on and everything that hung on them; returns
-- how many of the removed rows were not context rows. Needs first <= keep <= count.
local function cut(keep, first, count)
  local removed_ui = 0
  if keep < count then
    for _, row in ipairs(redis.call('LRANGE', ROWS, keep - first, -1)) do
      if string.sub(row, 1, 1) ~= 'c' then
        removed_ui = removed_ui + 1
      end
    end
    if keep == first then
      redis.call('DEL', ROWS)
    else
      redis.call('LTRIM', ROWS, 0, keep - first - 1)
    end
  end
  -- CS-11: compactions past the cut no longer describe the log (boundaries only grow).
  while true do
    local last = redis.call('LINDEX', CMP, -1)
    if not last or cjson.decode(last).b <= keep then
      break
    end
    redis.call('RPOP', CMP)
  end
  redis.call('ZREMRANGEBYSCORE', CTXD, keep, '+inf')
  redis.call('ZREMRANGEBYSCORE', LATED, keep, '+inf')
  for _, pair in ipairs({{CKPT, CKPTN}, {CMT, CMTN}}) do
    for _, id in ipairs(redis.call('ZRANGEBYSCORE', pair[2], '(' .. keep, '+inf')) do
      redis.call('HDEL', pair[1], id)
      if pair[1] == CKPT then
        redis.call('ZREM', CKPTL, id)
      end
    end
    redis.call('ZREMRANGEBYSCORE', pair[2], '(' .. keep, '+inf')
  end
  return removed_ui
end

-- CS-9: in a preserved session, the `n` oldest rows (from index `first`) go to the
-- archive before retention trims them.
local function archive(n, first)
  if redis.call('HGET', META, 'pres') ~= '1' then
    return
  end
  if redis.call('LLEN', ARCH) == 0 then
    redis.call('HSET', META, 'arch0', first)
  end
  local i = 0
  while i < n do
    local last = math.min(i + 499, n - 1)
    redis.call('RPUSH', ARCH, unpack(redis.call('LRANGE', ROWS, i, last)))
    i = last + 1
  end
end

local function push_rows(from, n)
  local i = from
  while i < from + n do
    local last = math.min(i + 499, from + n - 1)
    redis.call('RPUSH', ROWS, unpack(ARGV, i, last))
    i = last + 1
  end
end

-- Retention keeps the newest `max_messages` rows (0: all); indexes stay absolute.
-- Returns the new first index.
local function retain(max_messages, count, first)
  if max_messages > 0 and count - first > max_messages then
    archive(count - first - max_messages, first)
    redis.call('LTRIM', ROWS, count - first - max_messages, -1)
    return count - max_messages
  end
  return first
end

-- The start of a commit (lua/commit.lua, lua/append.lua): the meta fields count,
-- first, ui, la, ukey, created and then the `...` ones, and the reply to give at once
-- when the session is missing or the commit id already landed (stored in CMT as
-- 'first_index:message_count'), or nil to go on.
local function commit_start(has_cid, cid, ...)
  local m = redis.call('HMGET', META, 'count', 'first', 'ui', 'la', 'ukey', 'created', ...)
  -- Every session has a count: no count, no session.
  if not m[1] then
    return m, {'session_not_found'}
  end
  if has_cid then
    local landed_as = redis.call('HGET', CMT, cid)
    if landed_as then
      local at = string.find(landed_as, ':', 1, true)
      return m, commit_reply({first_index = string.sub(landed_as, 1, at - 1),
        message_count = string.sub(landed_as, at + 1), replayed = 1,
        last_activity = m[4], user_key = m[5] or ''})
    end
  end
  return m, nil
end

-- The end of a landed commit: the meta's new count, first and ui, activity, TTL and
-- listing (`m`: commit_start's fields; `base`: the count before it), and its reply.
local function commit_landed(m, base, count, first, ui)
  local done = landed(next_activity(m[4]), 'LT', m[5], {'count', count, 'first', first, 'ui', ui},
    m[6], count)
  return commit_reply({first_index = int(base), message_count = int(count), replayed = 0,
    last_activity = int(done[2]), user_key = done[3]})
end
