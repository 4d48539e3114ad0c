-- Scoped state, step 4 (the session's slot): drop applied journal entries, then seal
-- each map the journal no longer names pending. KEYS: meta, journal, pending, seals.
-- ARGV: n applied sequences, the sequences, then map key / writers' token pairs.
-- Returns the map keys sealed (their writers entry may now go, lua/scs_drop.lua).
-- A commit that announced itself after the token a seal holds clears the seal; one
-- that announced before it is refused ('sealed') and announces again (_engine.py).
local n = tonumber(ARGV[1])
for i = 2, n + 1 do
  redis.call('HDEL', KEYS[2], ARGV[i])
end
local sealed = {}
-- A seal goes only to a live session, and expires with it (lua/apply.lua).
local deadline = redis.call('PEXPIRETIME', KEYS[1])
local alive = deadline ~= -2
for i = n + 2, #ARGV, 2 do
  local map, token = ARGV[i], ARGV[i + 1]
  local pending = tonumber(redis.call('HGET', KEYS[3], map) or '-1')
  local waiting = false
  if pending >= 0 then
    for _, seq in ipairs(redis.call('HKEYS', KEYS[2])) do
      if tonumber(seq) <= pending then
        waiting = true
      end
    end
    if not waiting then
      redis.call('HDEL', KEYS[3], map)
    end
  end
  if not waiting then
    if alive then
      redis.call('HSET', KEYS[4], map, token)
      if deadline > 0 then
        redis.call('PEXPIREAT', KEYS[4], deadline)
      end
    end
    sealed[#sealed + 1] = map
  end
end
return sealed
