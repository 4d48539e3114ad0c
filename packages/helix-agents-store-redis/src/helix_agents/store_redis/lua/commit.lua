-- append_messages: the commit of docs/commit.md, check by check, before the first write.
-- The named ARGV slots (has_cid, starting, rewind, ... fence) are COMMIT of
-- _schema.py; from ARGV[REST] on: the n rows ('c' or 'm' + JSON), the context
-- deliveries (key/offset pairs) and the late ones likewise; then scoped state
-- (docs/scoped-state.md): the count of the session map's keys and its key / JSON
-- pairs, the count of app and user maps and their map key / writers' token pairs,
-- the journal entry of those maps' changes (JSON, '' when none).
-- Landed (or replayed) it replies with the fields COMMIT_REPLY in one
-- ':'-joined string (redis-py reads one string much faster than an array); a
-- refusal is an array (see refuse in _session.lua).
local ctx_at = REST + n
local late_at = ctx_at + 2 * n_ctx
local scs_at = late_at + 2 * n_late
local n_own = tonumber(ARGV[scs_at])
local shared_at = scs_at + 1 + 2 * n_own
local n_shared = tonumber(ARGV[shared_at])
local entry = ARGV[shared_at + 1 + 2 * n_shared]

-- 1. the session exists; a commit id that already landed replays.
local m, early = commit_start(has_cid, cid)
if early then
  return early
end
local count, first, ui = tonumber(m[1]), tonumber(m[2]), tonumber(m[3])

-- What the client needs to rebuild core's CommitState and raise its error.
local function deliveries_state(hash, zset, at, k)
  local out = {}
  for j = 0, k - 1 do
    local key = ARGV[at + 2 * j]
    out[#out + 1] = redis.call('HEXISTS', hash, key)
    out[#out + 1] = redis.call('ZSCORE', zset, key)
  end
  return out
end

local function refuse_commit(code)
  local used = 0
  if starting then
    used = redis.call('SISMEMBER', RUNS, run_id)
  end
  local extra = {used}
  for _, v in ipairs(deliveries_state(CTX, CTXD, ctx_at, n_ctx)) do extra[#extra + 1] = v end
  for _, v in ipairs(deliveries_state(LATE, LATED, late_at, n_late)) do extra[#extra + 1] = v end
  return refuse(code, unpack(extra))
end

-- 2. well formed: offsets, rewind_to, start + fence, run id reuse.
for _, span in ipairs({{ctx_at, n_ctx}, {late_at, n_late}}) do
  for j = 0, span[2] - 1 do
    local offset = tonumber(ARGV[span[1] + 2 * j + 1])
    if offset < 0 or offset >= n then
      return refuse_commit('invalid')
    end
  end
end
if starting then
  if rewind >= 0 and rewind > count then
    return refuse_commit('invalid')
  end
  if fenced or redis.call('SISMEMBER', RUNS, run_id) == 1 then
    return refuse_commit('invalid')
  end
end

-- 3. the fence; 4. the expected count (ignored when a run starts).
if fenced and not fence_ok(fence) then
  return refuse_commit('superseded')
end
if not starting and expect >= 0 and expect ~= count then
  return refuse_commit('count_conflict')
end

-- 5. the deliveries: queued, not delivered (or delivered beyond the rewind), named once.
local reopened = -1
if starting then
  reopened = rewind
end
local function deliverable(hash, zset, at, k)
  local seen = {}
  for j = 0, k - 1 do
    local key = ARGV[at + 2 * j]
    if seen[key] or redis.call('HEXISTS', hash, key) == 0 then
      return false
    end
    seen[key] = true
    local index = redis.call('ZSCORE', zset, key)
    if index and (reopened < 0 or tonumber(index) < reopened) then
      return false
    end
  end
  return true
end
if not deliverable(CTX, CTXD, ctx_at, n_ctx) then
  return refuse_commit('context_conflict')
end
if not deliverable(LATE, LATED, late_at, n_late) then
  return refuse_commit('late_conflict')
end
if starting and rewind >= 0 and rewind < first then
  return refuse('retention', rewind)
end

-- A reader sealed an app or user map after this commit announced itself: its writers
-- entry may be gone, so the client announces again and resends (lua/scs_settle.lua).
for j = 0, n_shared - 1 do
  local seal = redis.call('HGET', SCSS, ARGV[shared_at + 1 + 2 * j])
  if seal and tonumber(seal) >= tonumber(ARGV[shared_at + 2 + 2 * j]) then
    return {'sealed'}
  end
end

-- Every check passed: write it all.
if starting and rewind >= 0 then
  ui = ui - cut(rewind, first, count)
  count = rewind
end
if starting then
  redis.call('HSET', META, 'run_id', run_id, 'run_status', 'live', 'run_started', int(NOW))
  redis.call('HDEL', META, 'run_ended')
  redis.call('SADD', RUNS, run_id)
end
local base = count
push_rows(REST, n)
count = count + n
ui = ui + n_ui
for _, span in ipairs({{CTXD, ctx_at, n_ctx}, {LATED, late_at, n_late}}) do
  for j = 0, span[3] - 1 do
    local at = span[2] + 2 * j
    redis.call('ZADD', span[1], base + tonumber(ARGV[at + 1]), ARGV[at])
  end
end
if has_cid then
  redis.call('HSET', CMT, cid, int(base) .. ':' .. int(count))
  redis.call('ZADD', CMTN, count, cid)
end
-- Scoped state: the session's map now; app and user maps through the journal.
if n_own > 0 then
  redis.call('HSET', SCS, unpack(ARGV, scs_at + 1, scs_at + 2 * n_own))
end
if n_shared > 0 then
  -- The entry's sequence: above the last one, and at least the server's time in
  -- microseconds, so a session created again under this id numbers its entries above
  -- every mark the old one left in the maps (docs/scoped-state.md, "Redis").
  local t = redis.call('TIME')
  local last = tonumber(redis.call('HGET', META, 'scsn') or '0')
  local seq = int(math.max(last + 1, tonumber(t[1]) * 1000000 + tonumber(t[2])))
  redis.call('HSET', META, 'scsn', seq)
  redis.call('HSET', SCSJ, seq, entry)
  for j = 0, n_shared - 1 do
    local map = ARGV[shared_at + 1 + 2 * j]
    redis.call('HDEL', SCSS, map)
    redis.call('HSET', SCSP, map, seq)
  end
end
first = retain(max_messages, count, first)
return commit_landed(m, base, count, first, ui)
