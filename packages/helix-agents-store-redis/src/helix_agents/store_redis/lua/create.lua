-- create_session, and the write half of clone_session (the source was read first).
-- ARGV[5..]: has user, user id, user index key, metadata JSON, first retained
-- index, row count, non-context row count, n rows, the rows, then the
-- checkpoints (count, then id / message_count / JSON triples).
if redis.call('EXISTS', META) == 1 then
  return {'exists'}
end
-- Nothing of an earlier session with this id may survive into the new one, but the
-- app and user deltas its journal still holds: they landed (docs/scoped-state.md,
-- "Redis"). The new session numbers its entries after them.
local stale, last = {}, 0
for i = 2, #KEYS do
  if KEYS[i] ~= SCSJ then
    stale[#stale + 1] = KEYS[i]
  end
end
redis.call('DEL', unpack(stale))
for _, seq in ipairs(redis.call('HKEYS', SCSJ)) do
  last = math.max(last, tonumber(seq))
end
local fields = {'created', int(NOW), 'first', ARGV[9], 'count', ARGV[10], 'ui', ARGV[11],
  'md', ARGV[8]}
if last > 0 then
  fields[#fields + 1] = 'scsn'
  fields[#fields + 1] = int(last)
end
if ARGV[5] == '1' then
  for _, v in ipairs({'user', ARGV[6], 'ukey', ARGV[7]}) do
    fields[#fields + 1] = v
  end
end
redis.call('HSET', META, unpack(fields))
local n = tonumber(ARGV[12])
push_rows(13, n)
local ck_at = 13 + n
for j = 0, tonumber(ARGV[ck_at]) - 1 do
  local at = ck_at + 1 + 3 * j
  redis.call('HSET', CKPT, ARGV[at], ARGV[at + 2])
  redis.call('ZADD', CKPTN, ARGV[at + 1], ARGV[at])
  redis.call('ZADD', CKPTL, 0, ARGV[at])
end
return landed(NOW, 'SET')
