-- The one writer (docs/backends/redis.md, "Scripts"). KEYS: the session's keys in
-- _keys.SESSION_KEYS order, then, on standalone Redis, the store-wide index and the
-- user's listing index.
-- ARGV: op, session id, version, idle TTL (ms), '1' on standalone, then the op's own.
-- No rule of core is decided here: core planned the changes from a snapshot at
-- `version`; they apply only if the session is still there, else the answer is the
-- current snapshot (nil when the session is gone) and core plans again.
local op, SID, TTL = ARGV[1], ARGV[2], tonumber(ARGV[4])
local ALL, UKEY = KEYS[NKEYS + 1], KEYS[NKEYS + 2]

local function int(n) return string.format('%d', n) end

local function push(key, values, from, to)
  to = to or #values
  for i = from, to, 1000 do
    redis.call('RPUSH', key, unpack(values, i, math.min(i + 999, to)))
  end
end

local function count_ui(rows, from, to)
  local ui = 0
  for i = from, to or #rows do
    if string.sub(rows[i], 1, 1) == 'm' then ui = ui + 1 end
  end
  return ui
end

local function checkpoint(id, count, json)
  redis.call('HSET', CKPT, id, json)
  redis.call('ZADD', CKPTN, count, id)
  redis.call('ZADD', CKPTL, 0, id)
end

-- A session's entry in its user's index; the index lives as long as its latest write.
local function index(ukey, la, mode)
  local fresh = redis.call('EXISTS', ukey) == 0
  redis.call('ZADD', ukey, mode, int(-la), SID)
  if TTL == 0 then redis.call('PERSIST', ukey)
  else redis.call('PEXPIRE', ukey, TTL, fresh and 'NX' or 'GT') end
end

-- Every key of the session gets one deadline (or none), so it expires whole; but a
-- journal holding app or user deltas never expires (docs/scoped-state.md, "Redis").
local function expire()
  if TTL > 0 then
    local t = redis.call('TIME')
    local deadline = int(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + TTL)
    for i = 1, NKEYS do redis.call('PEXPIREAT', KEYS[i], deadline) end
    redis.call('PERSIST', SCSJ)
  elseif redis.call('PTTL', META) ~= -1 then
    for i = 1, NKEYS do redis.call('PERSIST', KEYS[i]) end
  end
end

-- On standalone Redis the index is written with the session, so the declared index
-- key must be the session's (the client learns it from `{'ukey', key}`).
local function wrong_ukey()
  local ukey = redis.call('HGET', META, 'ukey') or ''
  if ARGV[5] == '1' and ukey ~= (UKEY or '') then return {'ukey', ukey} end
end

-- Drop rows at index >= keep and what hung on them (core's inprocess/_changes.py, _cut).
local function cut(keep, first)
  local ui = count_ui(redis.call('LRANGE', ROWS, keep - first, -1), 1)
  if keep > first then redis.call('LTRIM', ROWS, 0, keep - first - 1)
  else redis.call('DEL', ROWS) end
  redis.call('HINCRBY', META, 'ui', int(-ui))
  redis.call('HSET', META, 'count', int(keep))
  redis.call('ZREMRANGEBYSCORE', QD, int(keep), '+inf')
  local above = '(' .. int(keep)
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', CKPTN, above, '+inf')) do
    redis.call('HDEL', CKPT, id)
    redis.call('ZREM', CKPTL, id)
  end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', CMTN, above, '+inf')) do
    redis.call('HDEL', CMT, id)
  end
  redis.call('ZREMRANGEBYSCORE', CKPTN, above, '+inf')
  redis.call('ZREMRANGEBYSCORE', CMTN, above, '+inf')
  local kept, ws = {}, 0
  for _, c in ipairs(redis.call('LRANGE', CMP, 0, -1)) do
    local b = tonumber(string.match(c, '^%d+'))
    if b <= keep then kept[#kept + 1], ws = c, b end
  end
  redis.call('DEL', CMP)
  push(CMP, kept, 1)
  redis.call('HSET', META, 'cmpn', #kept, 'ws', ws)
end

-- App and user deltas go to the session's journal (docs/scoped-state.md, step 2).
local function journal(entry, tokens)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local seq = int(math.max(tonumber(redis.call('HGET', META, 'scsn') or '0') + 1, now))
  redis.call('HSET', META, 'scsn', seq)
  redis.call('HSET', SCSJ, seq, entry)
  for i = 1, #tokens, 2 do
    redis.call('HSET', SCSP, tokens[i], seq)
    redis.call('HDEL', SCSS, tokens[i])
  end
end

-- Core's Changes, field by field and in their order (seam.py; _codec.changes_json);
-- the new rows are ARGV[from..to].
local function apply(c, from, to)
  local first = tonumber(redis.call('HGET', META, 'first'))
  if c.clear then
    redis.call('DEL', ROWS, Q, QD, APPR, DONE, CKPT, CKPTN, CKPTL, CMT, CMTN, OUT, CMP, ARCH, SCS)
    redis.call('HSET', META, 'first', 0, 'count', 0, 'ui', 0, 'cmpn', 0, 'ws', 0, 'pres', 0)
    first = 0
  end
  if c.cut then cut(c.cut, first) end
  if c.run then
    redis.call('HSET', META, 'run', c.run[2])
    redis.call('SADD', RUNS, c.run[1])
  end
  if to >= from then
    push(ROWS, ARGV, from, to)
    redis.call('HINCRBY', META, 'count', to - from + 1)
    redis.call('HINCRBY', META, 'ui', count_ui(ARGV, from, to))
  end
  for _, d in ipairs(c.dl or {}) do redis.call('ZADD', QD, d[2], d[1]) end
  if c.enq then
    redis.call('HSET', Q, c.enq[1], c.enq[2])
    redis.call('ZREM', QD, c.enq[1])
  end
  if c.scs then redis.call('HSET', SCS, unpack(c.scs)) end
  if c.shared then journal(c.shared, c.tok) end
  if c.cmt then
    redis.call('HSET', CMT, c.cmt[1], c.cmt[3])
    redis.call('ZADD', CMTN, c.cmt[2], c.cmt[1])
  end
  if c.drop and c.drop > first then
    local gone = redis.call('LRANGE', ROWS, 0, c.drop - first - 1)
    if c.archive then
      for i, row in ipairs(gone) do gone[i] = int(first + i - 1) .. ' ' .. row end
      push(ARCH, gone, 1)
    end
    redis.call('LTRIM', ROWS, c.drop - first, -1)
    redis.call('HSET', META, 'first', int(c.drop))
  end
  if c.arch then push(ARCH, c.arch, 1) end
  for _, a in ipairs(c.appr or {}) do redis.call('HSET', APPR, a[1], a[2]) end
  if c.res then
    redis.call('HDEL', APPR, c.res)
    redis.call('SADD', DONE, c.res)
  end
  if c.ckpt then checkpoint(unpack(c.ckpt)) end
  for _, id in ipairs(c.dck or {}) do
    redis.call('HDEL', CKPT, id)
    redis.call('ZREM', CKPTN, id)
    redis.call('ZREM', CKPTL, id)
  end
  if c.out then
    redis.call('HSET', OUT, 't:' .. c.out[1], c.out[4], 'r:' .. c.out[1], c.out[3])
    if c.out[2] ~= '' then redis.call('HSET', OUT, 'k:' .. c.out[2], c.out[1]) end
  end
  if c.cmp then
    redis.call('RPUSH', CMP, int(c.cmp[1]) .. ' ' .. c.cmp[2])
    redis.call('HINCRBY', META, 'cmpn', 1)
    redis.call('HSET', META, 'ws', int(c.cmp[1]))
  end
  if c.pres then redis.call('HSET', META, 'pres', 1) end
  if c.md then redis.call('HSET', META, 'md', c.md) end
  if c.red then
    local at = c.red[1] - tonumber(redis.call('HGET', META, 'first'))
    redis.call('LSET', ROWS, at, c.red[2])
  end
  redis.call('HSET', META, 'la', int(c.la))
  redis.call('HINCRBY', META, 'v', 1)
end

-- A new session's head (op create; op restore).
local function create(s, rows)
  redis.call('HSET', META, 'v', ARGV[3], 'created', int(s.at), 'la', int(s.at), 'md', s.md,
    'first', s.first, 'count', s.first + rows, 'ui', s.ui, 'cmpn', 0, 'ws', 0, 'pres', 0)
  if s.user then redis.call('HSET', META, 'user', s.user, 'ukey', s.ukey) end
  for _, cp in ipairs(s.ck) do checkpoint(unpack(cp)) end
end

if op == 'apply' then
  local v = redis.call('HGET', META, 'v')
  if not v then return false end
  if v ~= ARGV[3] then return {'moved', snapshot(cjson.decode(ARGV[7]))} end
  local c = cjson.decode(ARGV[6])
  local refused = wrong_ukey()
  if refused then return refused end
  -- A reader sealed a map after this write announced itself: announce again.
  for i = 1, #(c.tok or {}), 2 do
    local seal = redis.call('HGET', SCSS, c.tok[i])
    if seal and tonumber(seal) >= tonumber(c.tok[i + 1]) then return {'sealed'} end
  end
  apply(c, 8, #ARGV)
  expire()
  if UKEY then index(UKEY, c.la, 'CH') end
  return {'ok', cjson.encode(redis.call('HMGET', META, unpack(HEAD)))}
elseif op == 'create' then
  if redis.call('EXISTS', META) == 1 then return 'exists' end
  local s = cjson.decode(ARGV[6])
  create(s, #ARGV - 7)
  push(ROWS, ARGV, 8)
  expire()
  if UKEY then index(UKEY, s.at, 'CH') end
  if ALL then redis.call('ZADD', ALL, 0, SID) end
  return 'created'
elseif op == 'restore' then -- a session and its import's plans, whole (docs/export.md, EXP-11)
  if redis.call('EXISTS', META) == 1 then return 'exists' end
  -- Only absent keys are written, so no command below can fail half-way (a script's
  -- writes are not rolled back). A journal may outlive its session: not written here.
  for _, key in ipairs({ROWS, Q, QD, APPR, DONE, CKPT, CKPTN, CKPTL, RUNS, CMT, CMTN, OUT,
                        CMP, ARCH, SCS}) do
    if redis.call('EXISTS', key) == 1 then return {'stray', key} end
  end
  local s, plans = cjson.decode(ARGV[6]), cjson.decode(ARGV[7])
  create(s, 0)
  local from, la = 8, s.at
  for _, c in ipairs(plans) do
    apply(c, from, from + c.n - 1)
    from, la = from + c.n, c.la
  end
  expire()
  if UKEY then index(UKEY, la, 'CH') end
  if ALL then redis.call('ZADD', ALL, 0, SID) end
  return 'created'
elseif op == 'delete' then
  if redis.call('EXISTS', META) == 0 then return 0 end
  -- The client applies a journal holding entries first (docs/scoped-state.md, step 5).
  if redis.call('EXISTS', SCSJ) == 1 then return 'journal' end
  local refused = wrong_ukey()
  if refused then return refused end
  local ukey = redis.call('HGET', META, 'ukey') or ''
  redis.call('DEL', unpack(KEYS, 1, NKEYS))
  if UKEY then redis.call('ZREM', UKEY, SID) end
  if ALL then redis.call('ZREM', ALL, SID) end
  return {'deleted', ukey}
elseif op == 'index' then -- a cluster's second step, never backwards: KEYS[1] is the index
  index(KEYS[1], tonumber(ARGV[3]), 'LT')
  return 1
elseif op == 'unlist' then -- entries whose session is gone, if unchanged since seen
  for i = 6, #ARGV, 2 do
    if tonumber(redis.call('ZSCORE', KEYS[1], ARGV[i]) or 'x') == tonumber(ARGV[i + 1]) then
      redis.call('ZREM', KEYS[1], ARGV[i])
    end
  end
  return 1
end
