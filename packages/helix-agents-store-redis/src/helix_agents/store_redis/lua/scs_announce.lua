-- Scoped state, step 1 (the map's slot): register a session as a writer of the map
-- before its commit. KEYS: writers, counter, retired. ARGV[1]: session id. Returns the
-- token. A writer again is no longer retired: its mark stays while it writes.
local token = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], ARGV[1], token)
redis.call('ZREM', KEYS[3], ARGV[1])
return token
