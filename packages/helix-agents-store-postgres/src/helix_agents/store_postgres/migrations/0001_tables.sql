-- helix-agents session store, migration 1: the tables.
--
-- Applied with search_path set to the store's schema. The session id leads
-- every primary key (so the tables can be distributed by it, e.g. on Citus)
-- and every child row goes with its session (ON DELETE CASCADE). Ids use the
-- "C" collation so that ties sort by code point, as in the reference store.

CREATE TABLE __agents_sessions (
    session_id       text COLLATE "C" PRIMARY KEY,
    user_id          text COLLATE "C",
    created_at       timestamptz NOT NULL,
    last_activity_at timestamptz NOT NULL,
    metadata         jsonb NOT NULL,
    -- Absolute row count; rows below first_index were dropped by retention.
    message_count    bigint NOT NULL DEFAULT 0,
    first_index      bigint NOT NULL DEFAULT 0,
    -- Non-context rows, those dropped by retention included.
    ui_count         bigint NOT NULL DEFAULT 0,
    run_id           text COLLATE "C",
    run_status       text,
    run_started_at   timestamptz,
    run_ended_at     timestamptz
);

-- A user's sessions, most recent activity first, ties by id.
CREATE INDEX __agents_sessions_by_user
    ON __agents_sessions (user_id, last_activity_at DESC, session_id)
    WHERE user_id IS NOT NULL;

CREATE TABLE __agents_messages (
    session_id text COLLATE "C" NOT NULL
        REFERENCES __agents_sessions ON DELETE CASCADE,
    idx        bigint NOT NULL,
    is_context boolean NOT NULL,
    body       jsonb NOT NULL,
    PRIMARY KEY (session_id, idx)
);

-- Every run id a session ever used: run ids are never reused.
CREATE TABLE __agents_runs (
    session_id text COLLATE "C" NOT NULL
        REFERENCES __agents_sessions ON DELETE CASCADE,
    run_id     text COLLATE "C" NOT NULL,
    PRIMARY KEY (session_id, run_id)
);

CREATE TABLE __agents_context_items (
    session_id   text COLLATE "C" NOT NULL
        REFERENCES __agents_sessions ON DELETE CASCADE,
    item_key     text COLLATE "C" NOT NULL,
    at           timestamptz NOT NULL,
    body         jsonb NOT NULL,
    -- Index of the row that delivered the item; NULL while it is queued.
    delivered_at bigint,
    PRIMARY KEY (session_id, item_key)
);

CREATE INDEX __agents_context_items_queued
    ON __agents_context_items (session_id, at, item_key)
    WHERE delivered_at IS NULL;

CREATE TABLE __agents_late_answers (
    session_id   text COLLATE "C" NOT NULL
        REFERENCES __agents_sessions ON DELETE CASCADE,
    call_id      text COLLATE "C" NOT NULL,
    at           timestamptz NOT NULL,
    body         jsonb NOT NULL,
    delivered_at bigint,
    PRIMARY KEY (session_id, call_id)
);

CREATE INDEX __agents_late_answers_queued
    ON __agents_late_answers (session_id, at, call_id)
    WHERE delivered_at IS NULL;

-- Resolved approvals stay (resolved = true) so that re-adding their id does nothing.
CREATE TABLE __agents_approvals (
    session_id   text COLLATE "C" NOT NULL
        REFERENCES __agents_sessions ON DELETE CASCADE,
    approval_id  text COLLATE "C" NOT NULL,
    requested_at timestamptz NOT NULL,
    body         jsonb NOT NULL,
    resolved     boolean NOT NULL DEFAULT false,
    PRIMARY KEY (session_id, approval_id)
);

CREATE INDEX __agents_approvals_pending
    ON __agents_approvals (session_id, requested_at, approval_id)
    WHERE NOT resolved;

CREATE TABLE __agents_checkpoints (
    session_id    text COLLATE "C" NOT NULL
        REFERENCES __agents_sessions ON DELETE CASCADE,
    checkpoint_id text COLLATE "C" NOT NULL,
    message_count bigint NOT NULL,
    created_at    timestamptz NOT NULL,
    body          jsonb NOT NULL,
    PRIMARY KEY (session_id, checkpoint_id)
);

CREATE INDEX __agents_checkpoints_ordered
    ON __agents_checkpoints (session_id, message_count, created_at, checkpoint_id);

-- Landed commit ids and their results (IDEM); a truncate below a commit forgets it.
CREATE TABLE __agents_commits (
    session_id    text COLLATE "C" NOT NULL
        REFERENCES __agents_sessions ON DELETE CASCADE,
    commit_id     text COLLATE "C" NOT NULL,
    first_index   bigint NOT NULL,
    message_count bigint NOT NULL,
    PRIMARY KEY (session_id, commit_id)
);
