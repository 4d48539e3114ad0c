-- Drop a listing entry (and its summary) if it still has the score the caller saw.
-- KEYS[1] = the user index, KEYS[2] = its summaries; ARGV: session id, score.
index_drop(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]))
return 1
