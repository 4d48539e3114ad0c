-- helix-agents SQLite schema, version 1.
-- Every table is keyed by session id first; rows and payloads are JSON text.
-- Timestamps used for ordering are integer microseconds since the Unix epoch (UTC).

CREATE TABLE __agents_sessions (
    session_id       TEXT    NOT NULL PRIMARY KEY,
    user_id          TEXT,
    created_us       INTEGER NOT NULL,
    last_activity_us INTEGER NOT NULL,
    metadata         TEXT    NOT NULL,              -- JSON object
    message_count    INTEGER NOT NULL DEFAULT 0,    -- absolute: retained + dropped rows
    first_index      INTEGER NOT NULL DEFAULT 0,    -- index of the oldest retained row
    ui_count         INTEGER NOT NULL DEFAULT 0,    -- non-context rows, dropped ones included
    current_run      TEXT                           -- JSON RunInfo, or NULL
);

-- list_sessions: one user's sessions, newest activity first, ties by id.
CREATE INDEX __agents_sessions_by_user
    ON __agents_sessions (user_id, last_activity_us DESC, session_id);

-- Clustered on (session_id, idx): a session's newest rows sit together in a few pages.
CREATE TABLE __agents_messages (
    session_id TEXT    NOT NULL,
    idx        INTEGER NOT NULL,                    -- absolute row index
    is_context INTEGER NOT NULL,
    body       TEXT    NOT NULL,                    -- JSON row (core.dump_message)
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
    body        TEXT    NOT NULL,                   -- JSON PendingApproval
    PRIMARY KEY (session_id, approval_id)
);

CREATE INDEX __agents_approvals_pending
    ON __agents_approvals (session_id, resolved);

CREATE TABLE __agents_checkpoints (
    session_id    TEXT    NOT NULL,
    checkpoint_id TEXT    NOT NULL,
    message_count INTEGER NOT NULL,
    created_us    INTEGER NOT NULL,
    body          TEXT    NOT NULL,                 -- JSON Checkpoint
    PRIMARY KEY (session_id, checkpoint_id)
);

CREATE INDEX __agents_checkpoints_by_count
    ON __agents_checkpoints (session_id, message_count, created_us, checkpoint_id);

CREATE TABLE __agents_commits (
    session_id    TEXT    NOT NULL,
    commit_id     TEXT    NOT NULL,                 -- idempotency key of a landed commit
    first_index   INTEGER NOT NULL,
    message_count INTEGER NOT NULL,
    PRIMARY KEY (session_id, commit_id)
) WITHOUT ROWID;

CREATE INDEX __agents_commits_by_count
    ON __agents_commits (session_id, message_count);
