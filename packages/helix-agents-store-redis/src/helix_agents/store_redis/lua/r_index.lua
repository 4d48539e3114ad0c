-- list_sessions (standalone): up to ARGV[1] entries of the user's index after a
-- position, each with its summary (lua/_index.lua). ARGV[2] is the position's
-- score ('' = from the start); ties are the entries at exactly that score (the
-- client keeps those after the position's id). KEYS: the index, its summaries.
-- One string, fields joined by NUL (no id holds one): the rest's member/score
-- pairs, the ties' members (their score is ARGV[2]), the summaries of the ties
-- and then of the rest ('' when none), and last the count of ties and the
-- server's TIME (seconds, microseconds). The client reads a session itself
-- (lua/r_list.lua) where its summary is missing, past its deadline, or older
-- than its index entry.
-- Every string a script makes is hashed whole by this Lua, so the reply is one
-- table.concat over the index's own reply table, grown in place: no copies, no
-- partial strings (a third of the script's cost before). Ties come without
-- scores: formatting a score is most of a ZRANGE's own time.
local need = tonumber(ARGV[1])
local ids = {}
local lo = '-inf'
if ARGV[2] ~= '' then
  ids = redis.call('ZRANGE', KEYS[1], ARGV[2], ARGV[2], 'BYSCORE')
  lo = '(' .. ARGV[2]
end
local ties = #ids
local out = redis.call('ZRANGE', KEYS[1], lo, '+inf', 'BYSCORE', 'LIMIT', 0, need, 'WITHSCORES')
local k = #out
local n = ties
for i = 1, k, 2 do
  n = n + 1
  ids[n] = out[i]
end
for i = 1, ties do
  out[k + i] = ids[i]
end
k = k + ties
if n > 0 then
  local summaries = redis.call('HMGET', KEYS[2], unpack(ids))
  for i = 1, n do
    out[k + i] = summaries[i] or ''
  end
  k = k + n
end
local t = redis.call('TIME')
out[k + 1] = ties
out[k + 2] = t[1]
out[k + 3] = t[2]
return table.concat(out, '\0')
