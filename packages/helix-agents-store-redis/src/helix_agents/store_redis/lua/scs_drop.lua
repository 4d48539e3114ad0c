-- Scoped state, step 5 (the map's slot): forget a sealed writer, unless it announced
-- itself again since (its token moved). KEYS: writers. ARGV: session id, token.
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HDEL', KEYS[1], ARGV[1])
  return 1
end
return 0
