-- list_sessions (standalone): up to ARGV[1] entries of the user's index after a
-- position, each with its summary (lua/_index.lua). ARGV[2] is the position's
-- score ('' = from the start); ties are the entries at exactly that score (the
-- client keeps those after the position's id). KEYS: the index, its summaries.
-- One string, fields joined by NUL (no id holds one): the count of ties, then
-- member, score, summary for the ties and then the rest (one bulk reply is much
-- cheaper for the client to read than arrays). A summary is '' where there is
-- none or its session's deadline has passed: the client then reads the session
-- itself (lua/r_list.lua).
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
local out = {string.format('%d', ties)}
if #flat > 0 then
  local ids = {}
  for i = 1, #flat, 2 do
    ids[#ids + 1] = flat[i]
  end
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local summaries = redis.call('HMGET', KEYS[2], unpack(ids))
  for j, id in ipairs(ids) do
    local s = summaries[j]
    if s then
      local deadline = tonumber(string.match(s, '[^,]+$'))
      if deadline ~= 0 and deadline <= now then
        s = ''
      end
    end
    out[#out + 1] = id
    out[#out + 1] = flat[2 * j]
    out[#out + 1] = s or ''
  end
end
return table.concat(out, '\0')
