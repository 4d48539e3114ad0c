-- helix-agents session store, migration 1: the schema.
--
-- Applied with search_path set to the store's schema; the server-side
-- functions are in functions/*.sql, applied after the numbered migrations
-- (docs/backends/postgres.md, Migrations). The session id leads every primary
-- key (so the tables can be distributed by it, e.g. on Citus) and every child
-- row goes with its session (ON DELETE CASCADE; a session's messages through
-- __agents_delete, see __agents_messages). Ids use the "C" collation so that
-- ties sort by code point, as in the reference store.

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

-- No foreign key to the session row: it would cost a lookup of that row per
-- inserted row, while every writer of rows holds the session row lock. Deleting
-- a session goes through __agents_delete (functions/writes.sql), which takes
-- that lock and deletes the rows.
CREATE TABLE __agents_messages (
    session_id text COLLATE "C" NOT NULL,
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

-- The context store (docs/context-strategies.md): stored tool outputs,
-- compactions and the archive of rows retention removed from a preserved
-- session. Clearing a session clears them too.

CREATE TABLE __agents_outputs (
    session_id text COLLATE "C" NOT NULL
        REFERENCES __agents_sessions ON DELETE CASCADE,
    output_id  text COLLATE "C" NOT NULL,
    -- The caller's idempotency key; NULL when none was given.
    caller_key text COLLATE "C",
    ref        jsonb NOT NULL,
    content    text NOT NULL,
    PRIMARY KEY (session_id, output_id)
);

CREATE UNIQUE INDEX __agents_outputs_by_key
    ON __agents_outputs (session_id, caller_key) WHERE caller_key IS NOT NULL;

-- One row per compaction; the highest number sets the window start.
CREATE TABLE __agents_compactions (
    session_id text COLLATE "C" NOT NULL
        REFERENCES __agents_sessions ON DELETE CASCADE,
    number     bigint NOT NULL,
    boundary   bigint NOT NULL,
    summary    jsonb NOT NULL,
    PRIMARY KEY (session_id, number)
);

CREATE TABLE __agents_archive (
    session_id text COLLATE "C" NOT NULL
        REFERENCES __agents_sessions ON DELETE CASCADE,
    idx        bigint NOT NULL,
    body       jsonb NOT NULL,
    PRIMARY KEY (session_id, idx)
);

-- Sessions whose history is preserved (a hybrid or dynamic compaction happened).
CREATE TABLE __agents_preserved (
    session_id text COLLATE "C" PRIMARY KEY
        REFERENCES __agents_sessions ON DELETE CASCADE
);

-- Whatever statement removes rows, the context store follows (CS-9, CS-11):
-- the trigger runs __agents_rows_removed, whose body is functions/context.sql's
-- (applied after the numbered migrations). The trigger needs the function to
-- exist, so this creates it empty.
CREATE FUNCTION __agents_rows_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RETURN NULL;
END
$$;

CREATE TRIGGER __agents_rows_removed
    AFTER DELETE ON __agents_messages
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION __agents_rows_removed();

-- Scoped state (docs/scoped-state.md): one row per key of an app, user or session map. A session's map has scope 'session' and
-- its session id as owner; two commits setting different keys of one map touch different rows.
CREATE TABLE __agents_scoped_state (
    scope text  NOT NULL,
    owner text  NOT NULL,
    key   text  NOT NULL,
    value jsonb NOT NULL,
    PRIMARY KEY (scope, owner, key)
);
