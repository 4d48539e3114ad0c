-- list_sessions (standalone): up to ARGV[1] entries of the user's index after a
-- position, each with its summary (lua/_index.lua). ARGV[2] is the position's
-- score ('' = from the start); ties are the entries at exactly that score (the
-- client keeps those after the position's id). KEYS: the index, its summaries.
-- One string, fields joined by NUL (no id holds one): the count of ties, the
-- server's time in ms, then member, score, summary ('' when none) for the ties
-- and then the rest (one bulk reply is much cheaper for the client to read than
-- arrays). The client reads a session itself (lua/r_list.lua) where its summary
-- is missing, past its deadline, or older than its index entry.
local need = tonumber(ARGV[1])
local flat = {}
local lo = '-inf'
if ARGV[2] ~= '' then
  flat = redis.call('ZRANGE', KEYS[1], ARGV[2], ARGV[2], 'BYSCORE', 'WITHSCORES')
  lo = '(' .. ARGV[2]
end
local ties = #flat / 2
for _, v in ipairs(redis.call('ZRANGE', KEYS[1], lo, '+inf', 'BYSCORE', 'LIMIT', 0, need, 'WITHSCORES')) do
  flat[#flat + 1] = v
end
local t = redis.call('TIME')
local out = {string.format('%d', ties), t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))}
if #flat > 0 then
  local ids = {}
  for i = 1, #flat, 2 do
    ids[#ids + 1] = flat[i]
  end
  local summaries = redis.call('HMGET', KEYS[2], unpack(ids))
  for j = 1, #ids do
    out[#out + 1] = ids[j]
    out[#out + 1] = flat[2 * j]
    out[#out + 1] = summaries[j] or ''
  end
end
return table.concat(out, '\0')
