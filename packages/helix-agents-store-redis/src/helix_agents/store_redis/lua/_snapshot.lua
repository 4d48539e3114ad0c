-- A session read at one version (core's Snapshot), shared by read.lua and apply.lua.
-- Preceded by the names of the session's KEYS (META, ROWS, ...), generated from _keys.py.
local HEAD = {'v', 'created', 'la', 'md', 'user', 'first', 'count', 'ui', 'run', 'cmpn', 'ws', 'pres'}

-- The head, then what want `w` names (its JSON: _codec.want_json), or false if gone.
-- Reply (JSON): head, replay, run used, queue state, approval state, named checkpoints, keyed
-- output, output, rows_from, rows, queued, pending, checkpoints, summary, archive, scoped.
local function snapshot(w)
  local h = redis.call('HMGET', META, unpack(HEAD))
  if not h[1] then return false end
  local first, count = tonumber(h[6]), tonumber(h[7])
  local qs, as, cps, output, rows, queued, cks = {}, {}, {}, {}, {}, {}, {}
  for _, k in ipairs(w.qk or {}) do
    if redis.call('HEXISTS', Q, k) == 1 then
      qs[#qs + 1] = k
      qs[#qs + 1] = redis.call('ZSCORE', QD, k)
    end
  end
  for _, id in ipairs(w.ai or {}) do
    if redis.call('HEXISTS', APPR, id) == 1 then
      table.insert(as, id)
      table.insert(as, 'pending')
    elseif redis.call('SISMEMBER', DONE, id) == 1 then
      table.insert(as, id)
      table.insert(as, 'resolved')
    end
  end
  for _, id in ipairs(w.ci or {}) do cps[#cps + 1] = redis.call('HGET', CKPT, id) end
  local keyed = false
  if w.ok then
    local id = redis.call('HGET', OUT, 'k:' .. w.ok)
    keyed = id and redis.call('HGET', OUT, 'r:' .. id)
  end
  if w.oi then
    local ref = redis.call('HGET', OUT, 'r:' .. w.oi)
    if ref then output = {ref, w.ot and redis.call('HGET', OUT, 't:' .. w.oi) or ''} end
  end
  local lo, hi = first, first
  if w.win then
    lo, hi = math.max(tonumber(h[11]), first), count
  elseif w.rows then -- RowSpan.clip: {lo, hi or -1, limit or -1, last}
    local s = w.rows
    lo = math.max(s[1], first)
    hi = s[2] < 0 and count or math.min(s[2], count)
    if s[3] >= 0 and hi - lo > s[3] then
      if s[4] then lo = hi - s[3] else hi = lo + s[3] end
    end
  end
  if hi > lo then rows = redis.call('LRANGE', ROWS, lo - first, hi - first - 1) end
  if w.qd then
    local all = redis.call('HGETALL', Q)
    for i = 1, #all, 2 do
      if string.sub(all[i], 1, 2) == w.qd and not redis.call('ZSCORE', QD, all[i]) then
        queued[#queued + 1] = all[i + 1]
      end
    end
  end
  if w.cks == 'all' then
    cks = redis.call('HVALS', CKPT)
  elseif w.cks then -- {min, max, limit}: ids in [low, high), greatest first
    local ids = redis.call('ZREVRANGEBYLEX', CKPTL, w.cks[2], w.cks[1], 'LIMIT', 0, w.cks[3])
    if #ids > 0 then cks = redis.call('HMGET', CKPT, unpack(ids)) end
  end
  -- One text, not a nested reply: the client parses one string (in C) instead of dozens
  -- of RESP elements (in Python). JSON (Lua's nil reads as false, an empty table as {}),
  -- then the rows, one per line: stored rows are compact JSON, which holds no newline,
  -- so they travel unescaped.
  return cjson.encode({
    h,
    w.c and redis.call('HGET', CMT, w.c) or false,
    w.r and redis.call('SISMEMBER', RUNS, w.r) or 0,
    qs, as, cps, keyed, output, lo, #rows, queued,
    w.pend and redis.call('HVALS', APPR) or {},
    cks,
    w.win and tonumber(h[10]) > 0 and redis.call('LINDEX', CMP, -1) or false,
    w.arch and redis.call('LRANGE', ARCH, 0, -1) or {},
    w.scs and redis.call('HGETALL', SCS) or {},
  }) .. '\n' .. table.concat(rows, '\n')
end
