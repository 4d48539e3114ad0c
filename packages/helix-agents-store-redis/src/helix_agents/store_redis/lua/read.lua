-- ARGV[1]: the want's JSON. The session's snapshot, or nil when it is gone.
return snapshot(cjson.decode(ARGV[1]))
