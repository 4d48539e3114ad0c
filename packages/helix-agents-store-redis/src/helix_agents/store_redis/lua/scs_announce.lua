-- Scoped state, step 1 (the map's slot): register a session as a writer of the map
-- before its commit. KEYS: writers, counter. ARGV[1]: session id. Returns the token.
local token = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], ARGV[1], token)
return token
