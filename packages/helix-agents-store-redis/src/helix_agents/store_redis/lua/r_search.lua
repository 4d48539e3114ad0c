-- search_history, one bounded step: the rows below index ARGV[1], newest first,
-- live log then archive, looking at no more than ARGV[2] rows. A row is a
-- candidate when it contains every literal of ARGV[3..] (plain find on its
-- JSON: a necessary condition the client chose); the client's RE2 decides.
-- KEYS: meta, rows, arch. Reply: 'ok', the index to continue below (-1: done),
-- then index, archived flag and row for each candidate.
local META, ROWS, ARCH = KEYS[1], KEYS[2], KEYS[3]
if redis.call('EXISTS', META) == 0 then
  return {'session_not_found'}
end
local before, budget = tonumber(ARGV[1]), tonumber(ARGV[2])
local literals = {}
for i = 3, #ARGV do
  literals[#literals + 1] = ARGV[i]
end
local m = redis.call('HMGET', META, 'first', 'count', 'arch0')
local first, count = tonumber(m[1]), tonumber(m[2])
local arch0 = tonumber(m[3] or '0')
local arch_end = arch0 + redis.call('LLEN', ARCH)
local out = {'ok', -1}

local function scan(key, base, lo, hi, archived)
  -- rows [lo, hi) of the list whose first element has index `base`, newest first
  if hi <= lo then
    return
  end
  local rows = redis.call('LRANGE', key, lo - base, hi - base - 1)
  for i = #rows, 1, -1 do
    local row = rows[i]
    local keep = true
    for _, literal in ipairs(literals) do
      if not string.find(row, literal, 1, true) then
        keep = false
        break
      end
    end
    if keep then
      out[#out + 1] = lo + i - 1
      out[#out + 1] = archived
      out[#out + 1] = string.sub(row, 2)
    end
  end
end

local hi = math.min(before, count)
if hi > first then
  local lo = math.max(first, hi - budget)
  scan(ROWS, first, lo, hi, 0)
  budget = budget - (hi - lo)
  hi = lo
end
if hi > first then
  out[2] = hi
  return out
end
hi = math.min(hi, arch_end)
if hi > arch0 and budget > 0 then
  local lo = math.max(arch0, hi - budget)
  scan(ARCH, arch0, lo, hi, 1)
  hi = lo
end
if hi > arch0 then
  out[2] = hi
end
return out
