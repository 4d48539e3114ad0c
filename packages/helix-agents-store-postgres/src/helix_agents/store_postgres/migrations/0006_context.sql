-- helix-agents session store, migration 6: the context store (docs/context-strategies.md).
--
-- Stored tool outputs, compactions and the archive of rows retention removed
-- from a preserved session. Every table goes with its session (ON DELETE
-- CASCADE); clearing a session clears them too.

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
-- (applied after the numbered migrations, docs/backends/postgres.md,
-- Migrations). The trigger needs the function to exist, so this creates it
-- empty. This migration also created the first versions of the functions of
-- functions/context.sql; a schema that applied that earlier text is accepted
-- (_migrations.py).
CREATE FUNCTION __agents_rows_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RETURN NULL;
END
$$;

CREATE TRIGGER __agents_rows_removed
    AFTER DELETE ON __agents_messages
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION __agents_rows_removed();
