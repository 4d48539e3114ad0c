-- list_sessions, step 2 (standalone): the summary of each listed session, in one
-- string. KEYS: each session's meta and approvals, in pairs; ARGV[1]: the user.
-- Per session 'created,last_activity,count,pending_approvals', or '-' where the
-- session is gone or not the user's; space-separated (every field is a number).
local out = {}
for i = 1, #KEYS, 2 do
  local m = redis.call('HMGET', KEYS[i], 'created', 'la', 'count', 'user')
  if m[1] and m[4] == ARGV[1] then
    out[#out + 1] = m[1] .. ',' .. m[2] .. ',' .. m[3] .. ',' .. redis.call('HLEN', KEYS[i + 1])
  else
    out[#out + 1] = '-'
  end
end
return table.concat(out, ' ')
