-- Drop a listing entry if it still has the score the caller saw.
-- KEYS[1] = the user index; ARGV: session id, score.
index_drop(KEYS[1], ARGV[1], tonumber(ARGV[2]))
return 1
