-- helix-agents SQLite schema, version 1.
-- Every table is keyed by session id first; rows and payloads are JSON text.
-- Timestamps used for ordering are integer microseconds since the Unix epoch (UTC).

-- A session's head: what every write plans from, read with one primary-key lookup.
CREATE TABLE __agents_sessions (
    session_id       TEXT    NOT NULL PRIMARY KEY,
    version          INTEGER NOT NULL,              -- +1 per write; random at creation
    user_id          TEXT,
    created_us       INTEGER NOT NULL,
    last_activity_us INTEGER NOT NULL,
    metadata         TEXT    NOT NULL,              -- JSON object
    message_count    INTEGER NOT NULL DEFAULT 0,    -- absolute: retained + dropped rows
    first_index      INTEGER NOT NULL DEFAULT 0,    -- index of the oldest retained row
    ui_count         INTEGER NOT NULL DEFAULT 0,    -- non-context rows, dropped ones included
    current_run      TEXT,                          -- JSON RunInfo, or NULL
    window_start     INTEGER NOT NULL DEFAULT 0,    -- boundary of the latest compaction
    compactions      INTEGER NOT NULL DEFAULT 0,    -- how many compactions stand
    preserved        INTEGER NOT NULL DEFAULT 0     -- 1: retention archives what it drops
);

-- list_sessions: one user's sessions, newest activity first, ties by id.
CREATE INDEX __agents_sessions_by_user
    ON __agents_sessions (user_id, last_activity_us DESC, session_id);

-- Clustered on (session_id, idx): a session's newest rows sit together in a few pages.
CREATE TABLE __agents_messages (
    session_id TEXT    NOT NULL,
    idx        INTEGER NOT NULL,                    -- absolute row index
    is_context INTEGER NOT NULL,
    body       TEXT    NOT NULL,                    -- JSON row (core.dump_message_json)
    PRIMARY KEY (session_id, idx)
) WITHOUT ROWID;

CREATE TABLE __agents_runs (
    session_id TEXT NOT NULL,
    run_id     TEXT NOT NULL,                       -- every run id ever started
    PRIMARY KEY (session_id, run_id)
) WITHOUT ROWID;

CREATE TABLE __agents_context_items (
    session_id      TEXT    NOT NULL,
    item_key        TEXT    NOT NULL,
    delivered_index INTEGER,                        -- NULL while queued
    body            TEXT    NOT NULL,               -- JSON StoredContextItem
    PRIMARY KEY (session_id, item_key)
);

CREATE INDEX __agents_context_items_by_delivery
    ON __agents_context_items (session_id, delivered_index);

CREATE TABLE __agents_late_answers (
    session_id      TEXT    NOT NULL,
    call_id         TEXT    NOT NULL,
    delivered_index INTEGER,                        -- NULL while queued
    body            TEXT    NOT NULL,               -- JSON LateAnswer
    PRIMARY KEY (session_id, call_id)
);

CREATE INDEX __agents_late_answers_by_delivery
    ON __agents_late_answers (session_id, delivered_index);

CREATE TABLE __agents_approvals (
    session_id  TEXT    NOT NULL,
    approval_id TEXT    NOT NULL,
    resolved    INTEGER NOT NULL DEFAULT 0,         -- resolved ids stay, so a re-add is a no-op
    body        TEXT,                               -- JSON PendingApproval
    PRIMARY KEY (session_id, approval_id)
);

CREATE INDEX __agents_approvals_pending
    ON __agents_approvals (session_id, resolved);

-- Pages are ranges of the primary key: TEXT compares by code point (BINARY collation).
CREATE TABLE __agents_checkpoints (
    session_id    TEXT    NOT NULL,
    checkpoint_id TEXT    NOT NULL,
    message_count INTEGER NOT NULL,
    body          TEXT    NOT NULL,                 -- JSON Checkpoint
    PRIMARY KEY (session_id, checkpoint_id)
);

CREATE INDEX __agents_checkpoints_by_count
    ON __agents_checkpoints (session_id, message_count);

CREATE TABLE __agents_commits (
    session_id    TEXT    NOT NULL,
    commit_id     TEXT    NOT NULL,                 -- idempotency key of a landed commit
    first_index   INTEGER NOT NULL,
    message_count INTEGER NOT NULL,
    PRIMARY KEY (session_id, commit_id)
) WITHOUT ROWID;

CREATE INDEX __agents_commits_by_count
    ON __agents_commits (session_id, message_count);

-- The context store (docs/context-strategies.md). ref is the JSON OutputRef.
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

-- One row per compaction, numbered from 1; the highest number is the window.
CREATE TABLE __agents_compactions (
    session_id TEXT    NOT NULL,
    number     INTEGER NOT NULL,
    boundary   INTEGER NOT NULL,
    summary    TEXT    NOT NULL,                    -- JSON context row
    PRIMARY KEY (session_id, number)
) WITHOUT ROWID;

-- Archived rows, in write order (seq counts from 1 per session): rows retention removed
-- from a session whose history is preserved, rows an archiving replace cut. An index
-- may repeat: a replace reuses the indexes it cut (docs/context-strategies.md, CS-19).
CREATE TABLE __agents_archive (
    session_id TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    idx        INTEGER NOT NULL,
    body       TEXT    NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

-- Scoped state (docs/scoped-state.md): one row per key of an app, user or session map;
-- a session's map has scope 'session' and its session id as owner. value is JSON.
CREATE TABLE __agents_scoped_state (
    scope TEXT NOT NULL,
    owner TEXT NOT NULL,
    key   TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (scope, owner, key)
) WITHOUT ROWID;
