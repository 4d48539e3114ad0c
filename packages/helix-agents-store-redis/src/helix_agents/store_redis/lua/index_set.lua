-- The cluster's second step after a landed write: KEYS[1] = the user index
-- (KEYS[2], its summaries, is declared for index_drop's sake and unused here);
-- ARGV: session id, score, 'LT' or 'SET', idle TTL in ms (0 = none).
index_set(KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]))
return 1
