-- KEYS of every session write: all the session's keys (an idle TTL goes on each),
-- under one hash tag, so each script touches one cluster slot (see _keys.py for
-- the order). Read scripts name only the keys they read.
local META, ROWS, CTX, CTXD, LATE, LATED = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local APPR, DONE, CKPT, CKPTN, RUNS, CMT, CMTN =
  KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12], KEYS[13]
local CKPTL = KEYS[14]
local OUT, OUTR, OUTK, CMP, ARCH = KEYS[15], KEYS[16], KEYS[17], KEYS[18], KEYS[19]
local SCS, SCSJ, SCSP, SCSS = KEYS[20], KEYS[21], KEYS[22], KEYS[23]
