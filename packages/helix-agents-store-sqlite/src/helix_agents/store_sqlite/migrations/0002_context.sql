-- helix-agents SQLite schema: the context store (docs/context-strategies.md).

-- Tool outputs offloaded from the prompt; ref is the JSON OutputRef, content the full text.
CREATE TABLE __agents_outputs (
    session_id TEXT NOT NULL,
    output_id  TEXT NOT NULL,
    caller_key TEXT,                                -- idempotency key, NULL when none given
    ref        TEXT NOT NULL,
    content    TEXT NOT NULL,
    PRIMARY KEY (session_id, output_id)
);

CREATE UNIQUE INDEX __agents_outputs_by_key
    ON __agents_outputs (session_id, caller_key) WHERE caller_key IS NOT NULL;

-- One row per compaction; the latest (highest number) sets the window start.
CREATE TABLE __agents_compactions (
    session_id TEXT    NOT NULL,
    number     INTEGER NOT NULL,
    boundary   INTEGER NOT NULL,
    summary    TEXT    NOT NULL,                    -- JSON context row
    PRIMARY KEY (session_id, number)
) WITHOUT ROWID;

-- Rows retention removed from a session whose history is preserved.
CREATE TABLE __agents_archive (
    session_id TEXT    NOT NULL,
    idx        INTEGER NOT NULL,
    body       TEXT    NOT NULL,
    PRIMARY KEY (session_id, idx)
) WITHOUT ROWID;

-- Sessions whose history is preserved (a hybrid or dynamic compaction happened).
CREATE TABLE __agents_preserved (
    session_id TEXT NOT NULL PRIMARY KEY
) WITHOUT ROWID;
