-- helix-agents session store: the schema and the engine (docs/backends/postgres.md).
--
-- Applied once per schema with search_path set to it; every function keeps that
-- path (SET search_path FROM CURRENT). The session id leads every key. Rows and
-- payloads are the JSON text core made, in text columns, so a read returns exactly
-- what was written (NUL escapes and float spellings included). Ids use the "C"
-- collation so ties sort by code point, as in the memory store. No rule of core
-- is decided here: __agents_apply applies a plan core built, if the session is
-- still at the version it was built on, and otherwise answers the current snapshot.

CREATE TABLE __agents_sessions (
    session_id       text COLLATE "C" PRIMARY KEY,
    version          bigint NOT NULL,
    user_id          text COLLATE "C",
    created_at       timestamptz NOT NULL,
    last_activity_at timestamptz NOT NULL,
    metadata         text NOT NULL,
    message_count    bigint NOT NULL DEFAULT 0,  -- rows ever kept; first_index.. are stored
    first_index      bigint NOT NULL DEFAULT 0,
    ui_count         bigint NOT NULL DEFAULT 0,  -- rows that are not context rows
    run              text,                       -- the current run (RunInfo JSON)
    window_start     bigint NOT NULL DEFAULT 0,  -- the last compaction's boundary
    compactions      bigint NOT NULL DEFAULT 0,
    preserved        boolean NOT NULL DEFAULT false,
    scoped           jsonb NOT NULL DEFAULT '{}' -- the session's map: key -> JSON text
);

CREATE INDEX __agents_sessions_by_user
    ON __agents_sessions (user_id, last_activity_at DESC, session_id) WHERE user_id IS NOT NULL;

-- No foreign key: it would cost a lookup of the session row per inserted row, while
-- every writer holds that row's lock; __agents_delete deletes a session's rows.
CREATE TABLE __agents_messages (
    session_id text COLLATE "C" NOT NULL,
    idx        bigint NOT NULL,
    is_context boolean NOT NULL,
    body       text NOT NULL,
    PRIMARY KEY (session_id, idx)
);

CREATE TABLE __agents_runs (  -- every run id a session used
    session_id text COLLATE "C" NOT NULL REFERENCES __agents_sessions ON DELETE CASCADE,
    run_id     text COLLATE "C" NOT NULL,
    PRIMARY KEY (session_id, run_id)
);

CREATE TABLE __agents_queued (  -- context items ('context') and late answers ('late')
    session_id   text COLLATE "C" NOT NULL REFERENCES __agents_sessions ON DELETE CASCADE,
    queue        text NOT NULL,
    item_key     text COLLATE "C" NOT NULL,
    body         text NOT NULL,
    delivered_at bigint,  -- the delivering row's index; NULL while queued
    PRIMARY KEY (session_id, queue, item_key)
);

CREATE TABLE __agents_approvals (  -- resolved ones stay, as resolved
    session_id  text COLLATE "C" NOT NULL REFERENCES __agents_sessions ON DELETE CASCADE,
    approval_id text COLLATE "C" NOT NULL,
    body        text,
    resolved    boolean NOT NULL DEFAULT false,
    PRIMARY KEY (session_id, approval_id)
);

CREATE TABLE __agents_checkpoints (
    session_id    text COLLATE "C" NOT NULL REFERENCES __agents_sessions ON DELETE CASCADE,
    checkpoint_id text COLLATE "C" NOT NULL,
    message_count bigint NOT NULL,
    body          text NOT NULL,
    PRIMARY KEY (session_id, checkpoint_id)
);

CREATE TABLE __agents_commits (
    session_id    text COLLATE "C" NOT NULL REFERENCES __agents_sessions ON DELETE CASCADE,
    commit_id     text COLLATE "C" NOT NULL,
    first_index   bigint NOT NULL,
    message_count bigint NOT NULL,
    PRIMARY KEY (session_id, commit_id)
);

CREATE TABLE __agents_outputs (  -- content: the text as a JSON string
    session_id text COLLATE "C" NOT NULL REFERENCES __agents_sessions ON DELETE CASCADE,
    output_id  text COLLATE "C" NOT NULL,
    caller_key text COLLATE "C",
    ref        text NOT NULL,
    content    text NOT NULL,
    PRIMARY KEY (session_id, output_id)
);

CREATE UNIQUE INDEX __agents_outputs_by_key
    ON __agents_outputs (session_id, caller_key) WHERE caller_key IS NOT NULL;

CREATE TABLE __agents_compactions (  -- numbered 1..compactions
    session_id text COLLATE "C" NOT NULL REFERENCES __agents_sessions ON DELETE CASCADE,
    number     bigint NOT NULL,
    boundary   bigint NOT NULL,
    summary    text NOT NULL,
    PRIMARY KEY (session_id, number)
);

-- Archived rows in write order (seq counts from 1 per session): rows retention dropped
-- from a preserved session, rows an archiving replace cut. An index may repeat: a replace
-- reuses the indexes it cut (docs/context-strategies.md, CS-19).
CREATE TABLE __agents_archive (
    session_id text COLLATE "C" NOT NULL REFERENCES __agents_sessions ON DELETE CASCADE,
    seq        bigint NOT NULL,
    idx        bigint NOT NULL,
    body       text NOT NULL,
    PRIMARY KEY (session_id, seq)
);

CREATE TABLE __agents_scoped (  -- one key of an app or user map
    scope text NOT NULL,
    owner text NOT NULL,
    name  text NOT NULL,
    value text NOT NULL,
    PRIMARY KEY (scope, owner, name)
);

-- What a read or a write answers: the head (a JSON array), and what the Want asked.
CREATE TYPE __agents_snap AS (
    refused boolean, head text, rows_from bigint, rows text, replay text, run_used boolean,
    queue_state text, approval_state text, named text, keyed text, output text, queued text,
    pending text, checkpoints text, summary text, archive text, scoped text
);

CREATE FUNCTION __agents_head(s __agents_sessions) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT concat('[', s.version, ',', coalesce(to_json(s.user_id)::text, 'null'), ',',
        to_json(s.created_at AT TIME ZONE 'UTC'), ',',
        to_json(s.last_activity_at AT TIME ZONE 'UTC'), ',', s.metadata, ',',
        s.message_count, ',', s.first_index, ',', s.ui_count, ',', coalesce(s.run, 'null'), ',',
        s.window_start, ',', s.compactions, ',', s.preserved::text, ']')
$$;

-- The session s read with the Want w (keys as _codec.want_json writes them).
CREATE FUNCTION __agents_read(s __agents_sessions, w jsonb) RETURNS __agents_snap
LANGUAGE plpgsql STABLE SET search_path FROM CURRENT AS $$
DECLARE
    snap __agents_snap;
    sid  text := s.session_id;
    span jsonb := w->'rows';
    lo   bigint;
    hi   bigint := s.message_count;
    n    bigint := (span->>2)::bigint;
    pick jsonb := w->'checkpoints';
BEGIN
    snap.head := __agents_head(s);
    IF w = '{}' THEN
        RETURN snap;
    END IF;
    IF w ? 'window' THEN
        lo := greatest(s.window_start, s.first_index);
        SELECT summary INTO snap.summary FROM __agents_compactions
        WHERE session_id = sid AND number = s.compactions;
    ELSIF span IS NOT NULL THEN  -- RowSpan.clip
        lo := greatest((span->>0)::bigint, s.first_index);
        hi := least(coalesce((span->>1)::bigint, hi), hi);
        IF hi - lo > n AND (span->>3)::boolean THEN
            lo := hi - n;
        ELSIF hi - lo > n THEN
            hi := lo + n;
        END IF;
    END IF;
    IF lo IS NOT NULL THEN
        snap.rows_from := lo;
        SELECT '[' || string_agg(body, ',' ORDER BY idx) || ']' INTO snap.rows
        FROM __agents_messages WHERE session_id = sid AND idx >= lo AND idx < hi;
    END IF;
    IF w ? 'commit' THEN
        SELECT concat('[', first_index, ',', message_count, ']') INTO snap.replay
        FROM __agents_commits WHERE session_id = sid AND commit_id = w->>'commit';
    END IF;
    IF w ? 'run' THEN
        snap.run_used := EXISTS (
            SELECT FROM __agents_runs WHERE session_id = sid AND run_id = w->>'run');
    END IF;
    IF w ? 'keys' THEN
        SELECT json_object_agg(queue, state)::text INTO snap.queue_state FROM (
            SELECT queue, json_object_agg(item_key, delivered_at) AS state FROM __agents_queued
            WHERE session_id = sid AND (queue, item_key) IN (
                SELECT k.key, jsonb_array_elements_text(k.value) FROM jsonb_each(w->'keys') k)
            GROUP BY queue) q;
    END IF;
    IF w ? 'approvals' THEN
        SELECT json_object_agg(approval_id, CASE WHEN resolved THEN 'resolved' ELSE 'pending' END)
        INTO snap.approval_state FROM __agents_approvals WHERE session_id = sid
            AND approval_id IN (SELECT jsonb_array_elements_text(w->'approvals'));
    END IF;
    IF w ? 'output_key' THEN
        SELECT ref INTO snap.keyed FROM __agents_outputs
        WHERE session_id = sid AND caller_key = w->>'output_key';
    END IF;
    IF w ? 'output_id' THEN
        SELECT concat('[', ref, ',', CASE WHEN w ? 'output_text' THEN content ELSE '""' END, ']')
        INTO snap.output FROM __agents_outputs WHERE session_id = sid AND output_id = w->>'output_id';
    END IF;
    IF w ? 'checkpoint_ids' THEN
        SELECT '[' || string_agg(body, ',') || ']' INTO snap.named FROM __agents_checkpoints
        WHERE session_id = sid
            AND checkpoint_id IN (SELECT jsonb_array_elements_text(w->'checkpoint_ids'));
    END IF;
    IF w ? 'queued' THEN
        SELECT '[' || string_agg(body, ',') || ']' INTO snap.queued FROM __agents_queued
        WHERE session_id = sid AND queue = w->>'queued' AND delivered_at IS NULL;
    END IF;
    IF w ? 'pending' THEN
        SELECT '[' || string_agg(body, ',') || ']' INTO snap.pending FROM __agents_approvals
        WHERE session_id = sid AND NOT resolved;
    END IF;
    IF pick = '"all"' THEN
        SELECT '[' || string_agg(body, ',') || ']' INTO snap.checkpoints
        FROM __agents_checkpoints WHERE session_id = sid;
    ELSIF pick IS NOT NULL THEN  -- low <= id < high, the greatest `limit` ids, greatest first
        SELECT '[' || string_agg(body, ',' ORDER BY checkpoint_id DESC) || ']' INTO snap.checkpoints
        FROM (SELECT checkpoint_id, body FROM __agents_checkpoints
              WHERE session_id = sid AND checkpoint_id >= pick->>0
                -- no high: above every id (at most 512 bytes; U+10FFFF is 4 bytes in UTF-8)
                AND checkpoint_id < coalesce(pick->>1, repeat(chr(1114111), 200))
              ORDER BY checkpoint_id DESC LIMIT (pick->>2)::bigint) c;
    END IF;
    IF w ? 'archive' THEN
        SELECT '[' || string_agg(concat('[', idx, ',', body, ']'), ',' ORDER BY seq) || ']'
        INTO snap.archive FROM __agents_archive WHERE session_id = sid;
    END IF;
    IF w ? 'scoped' THEN
        snap.scoped := s.scoped::text;
    END IF;
    RETURN snap;
END
$$;

-- PL/pgSQL keeps the plans of a function's queries for the connection (a SQL function
-- that cannot be inlined plans its body on every call).
CREATE FUNCTION __agents_snapshot(p_id text, w jsonb) RETURNS __agents_snap
LANGUAGE plpgsql STABLE SET search_path FROM CURRENT AS $$
DECLARE
    s __agents_sessions%ROWTYPE;
BEGIN
    SELECT * INTO s FROM __agents_sessions WHERE session_id = p_id;
    RETURN CASE WHEN FOUND THEN __agents_read(s, w) END;
END
$$;

-- Apply the Changes c (fields in core's order, meanings of core's inprocess/_changes.py)
-- if the session is at p_version; answer the new head, or the current snapshot for w
-- (refused), or nothing when the session is gone.
CREATE FUNCTION __agents_apply(p_id text, p_version bigint, c jsonb, w jsonb)
RETURNS __agents_snap LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    s    __agents_sessions%ROWTYPE;
    snap __agents_snap;
    v    bigint;
    t    text;
    last_seq bigint;  -- the archive's end while archiving
    rows_in  bigint;
BEGIN
    -- Rows alone ('plain', the hot path): one statement locks the row, checks the version
    -- and writes; the general way below means the same, in more statements.
    IF c ? 'plain' THEN
        WITH x AS (
            UPDATE __agents_sessions SET version = version + 1,
                last_activity_at = (c->>'activity')::timestamptz,
                message_count = message_count + jsonb_array_length(c->'rows'),
                ui_count = ui_count + jsonb_array_length(c->'rows')
                    - jsonb_array_length(c->'context')
            WHERE session_id = p_id AND version = p_version RETURNING *
        ), added AS (
            INSERT INTO __agents_messages (session_id, idx, is_context, body)
            SELECT p_id, x.message_count - jsonb_array_length(c->'rows') + r.n - 1,
                (c->'context') @> to_jsonb(r.n - 1), r.body
            FROM x, jsonb_array_elements_text(c->'rows') WITH ORDINALITY AS r(body, n))
        SELECT * INTO s FROM x;
        IF FOUND THEN
            snap.head := __agents_head(s);
            RETURN snap;
        END IF;
    END IF;
    SELECT * INTO s FROM __agents_sessions WHERE session_id = p_id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN snap;
    ELSIF s.version <> p_version THEN
        snap := __agents_read(s, w);
        snap.refused := true;
        RETURN snap;
    END IF;
    IF c ? 'clear' THEN
        FOREACH t IN ARRAY ARRAY['messages', 'queued', 'approvals', 'checkpoints', 'commits',
                                 'outputs', 'compactions', 'archive'] LOOP
            EXECUTE format('DELETE FROM %I WHERE session_id = $1', '__agents_' || t) USING p_id;
        END LOOP;
        s.message_count := 0; s.first_index := 0; s.ui_count := 0; s.scoped := '{}';
        s.window_start := 0; s.compactions := 0; s.preserved := false;
    END IF;
    v := (c->>'cut_to')::bigint;
    IF v IS NOT NULL THEN  -- and what hung on the rows cut
        WITH gone AS (DELETE FROM __agents_messages WHERE session_id = p_id AND idx >= v
                      RETURNING is_context)
        SELECT s.ui_count - count(*) FILTER (WHERE NOT is_context) INTO s.ui_count FROM gone;
        s.message_count := v;
        UPDATE __agents_queued SET delivered_at = NULL WHERE session_id = p_id AND delivered_at >= v;
        DELETE FROM __agents_checkpoints WHERE session_id = p_id AND message_count > v;
        DELETE FROM __agents_commits WHERE session_id = p_id AND message_count > v;
        DELETE FROM __agents_compactions WHERE session_id = p_id AND boundary > v;
        SELECT count(*), coalesce(max(boundary), 0) INTO s.compactions, s.window_start
        FROM __agents_compactions WHERE session_id = p_id;
    END IF;
    IF c ? 'run' THEN
        s.run := c->>'run';
        INSERT INTO __agents_runs VALUES (p_id, c->>'run_id') ON CONFLICT DO NOTHING;
    END IF;
    IF c ? 'rows' THEN
        WITH added AS (
            INSERT INTO __agents_messages (session_id, idx, is_context, body)
            SELECT p_id, s.message_count + r.n - 1, (c->'context') @> to_jsonb(r.n - 1), r.body
            FROM jsonb_array_elements_text(c->'rows') WITH ORDINALITY AS r(body, n)
            RETURNING is_context)
        SELECT s.message_count + count(*), s.ui_count + count(*) FILTER (WHERE NOT is_context)
        INTO s.message_count, s.ui_count FROM added;
    END IF;
    IF c ? 'deliveries' THEN
        UPDATE __agents_queued q SET delivered_at = (d->>2)::bigint
        FROM jsonb_array_elements(c->'deliveries') d
        WHERE q.session_id = p_id AND q.queue = d->>0 AND q.item_key = d->>1;
    END IF;
    IF c ? 'enqueue' THEN
        INSERT INTO __agents_queued (session_id, queue, item_key, body)
        VALUES (p_id, c->'enqueue'->>0, c->'enqueue'->>1, c->'enqueue'->>2)
        ON CONFLICT (session_id, queue, item_key)
        DO UPDATE SET body = excluded.body, delivered_at = NULL;
    END IF;
    IF c ? 'session_scoped' THEN
        s.scoped := s.scoped || (c->'session_scoped');
    END IF;
    IF c ? 'scoped' THEN  -- app and user maps, key by key, in one order (no deadlock)
        INSERT INTO __agents_scoped (scope, owner, name, value)
        SELECT m->>0, m->>1, kv.key, kv.value
        FROM jsonb_array_elements(c->'scoped') m, jsonb_each_text(m->2) kv ORDER BY 1, 2, 3
        ON CONFLICT (scope, owner, name) DO UPDATE SET value = excluded.value;
    END IF;
    IF c ? 'commit' THEN
        INSERT INTO __agents_commits
        VALUES (p_id, c->'commit'->>0, (c->'commit'->>1)::bigint, (c->'commit'->>2)::bigint)
        ON CONFLICT (session_id, commit_id) DO UPDATE
        SET first_index = excluded.first_index, message_count = excluded.message_count;
    END IF;
    IF c ? 'archive' OR c ? 'archived' THEN
        SELECT coalesce(max(seq), 0) INTO last_seq FROM __agents_archive WHERE session_id = p_id;
    END IF;
    v := (c->>'drop_below')::bigint;
    IF v IS NOT NULL THEN  -- retention, archiving once history is preserved
        WITH gone AS (DELETE FROM __agents_messages WHERE session_id = p_id AND idx < v
                      RETURNING idx, body)
        INSERT INTO __agents_archive
        SELECT p_id, last_seq + row_number() OVER (ORDER BY idx), idx, body FROM gone
        WHERE c ? 'archive';
        GET DIAGNOSTICS rows_in = ROW_COUNT;
        last_seq := last_seq + rows_in;
        s.first_index := v;
    END IF;
    IF c ? 'archived' THEN  -- rows core names, as they are, in their order
        INSERT INTO __agents_archive
        SELECT p_id, last_seq + a.k, (a.e->>0)::bigint, a.e->>1
        FROM jsonb_array_elements(c->'archived') WITH ORDINALITY AS a(e, k);
    END IF;
    IF c ? 'approvals' THEN
        INSERT INTO __agents_approvals (session_id, approval_id, body)
        SELECT p_id, a->>0, a->>1 FROM jsonb_array_elements(c->'approvals') a
        ON CONFLICT (session_id, approval_id) DO UPDATE SET body = excluded.body, resolved = false;
    END IF;
    IF c ? 'resolve' THEN
        INSERT INTO __agents_approvals (session_id, approval_id, resolved)
        VALUES (p_id, c->>'resolve', true)
        ON CONFLICT (session_id, approval_id) DO UPDATE SET resolved = true;
    END IF;
    IF c ? 'checkpoint' THEN
        INSERT INTO __agents_checkpoints
        VALUES (p_id, c->'checkpoint'->>0, (c->'checkpoint'->>1)::bigint, c->'checkpoint'->>2)
        ON CONFLICT (session_id, checkpoint_id)
        DO UPDATE SET message_count = excluded.message_count, body = excluded.body;
    END IF;
    IF c ? 'delete_checkpoints' THEN
        DELETE FROM __agents_checkpoints WHERE session_id = p_id
            AND checkpoint_id IN (SELECT jsonb_array_elements_text(c->'delete_checkpoints'));
    END IF;
    IF c ? 'output' THEN  -- a key names its latest output
        UPDATE __agents_outputs SET caller_key = NULL
        WHERE session_id = p_id AND caller_key = c->'output'->>1;
        INSERT INTO __agents_outputs
        VALUES (p_id, c->'output'->>0, c->'output'->>1, c->'output'->>2, c->'output'->>3)
        ON CONFLICT (session_id, output_id) DO UPDATE SET caller_key = excluded.caller_key,
            ref = excluded.ref, content = excluded.content;
    END IF;
    IF c ? 'compaction' THEN
        s.compactions := s.compactions + 1;
        s.window_start := (c->'compaction'->>0)::bigint;
        INSERT INTO __agents_compactions
        VALUES (p_id, s.compactions, s.window_start, c->'compaction'->>1);
    END IF;
    s.preserved := s.preserved OR c ? 'preserve';
    IF c ? 'metadata' THEN
        s.metadata := c->>'metadata';
    END IF;
    IF c ? 'redact' THEN  -- one retained row rewritten in place (docs/lifecycle.md)
        UPDATE __agents_messages SET body = c->'redact'->>1
        WHERE session_id = p_id AND idx = (c->'redact'->>0)::bigint;
    END IF;
    s.version := s.version + 1;
    s.last_activity_at := (c->>'activity')::timestamptz;
    UPDATE __agents_sessions SET version = s.version, last_activity_at = s.last_activity_at,
        message_count = s.message_count, first_index = s.first_index, ui_count = s.ui_count,
        run = s.run, scoped = s.scoped, window_start = s.window_start,
        compactions = s.compactions, preserved = s.preserved, metadata = s.metadata
    WHERE session_id = p_id;
    snap.head := __agents_head(s);
    RETURN snap;
END
$$;

-- A new session at p_version, unless the id is taken ('exists'); a clone (p_source)
-- copies rows < p_end and checkpoints up to it from a source still at p_source_version
-- ('gone' without the source; its head when it moved).
CREATE FUNCTION __agents_create(
    p_id text, p_version bigint, p_user text, p_at timestamptz, p_meta text,
    p_source text, p_source_version bigint, p_end bigint
) RETURNS text LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    s __agents_sessions%ROWTYPE;
BEGIN
    IF p_source IS NOT NULL THEN
        SELECT * INTO s FROM __agents_sessions WHERE session_id = p_source FOR SHARE;
        IF NOT FOUND THEN
            RETURN 'gone';
        ELSIF s.version <> p_source_version THEN
            RETURN __agents_head(s);
        END IF;
    END IF;
    INSERT INTO __agents_sessions (session_id, version, user_id, created_at, last_activity_at,
                                   metadata, message_count, first_index, ui_count)
    VALUES (p_id, p_version, p_user, p_at, p_at, p_meta, coalesce(p_end, 0),
            coalesce(s.first_index, 0), coalesce(s.ui_count, 0) - (
                SELECT count(*) FROM __agents_messages
                WHERE session_id = p_source AND idx >= p_end AND NOT is_context))
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN 'exists';
    END IF;
    INSERT INTO __agents_messages
    SELECT p_id, idx, is_context, body FROM __agents_messages
    WHERE session_id = p_source AND idx < p_end;
    INSERT INTO __agents_checkpoints
    SELECT p_id, checkpoint_id, message_count, body FROM __agents_checkpoints
    WHERE session_id = p_source AND message_count <= p_end;
    RETURN 'created';
END
$$;

-- Delete a session and everything it holds, under its row lock (so a racing write lands
-- before, and its rows go too, or finds no session).
CREATE FUNCTION __agents_delete(p_id text) RETURNS boolean
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    PERFORM FROM __agents_sessions WHERE session_id = p_id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    DELETE FROM __agents_messages WHERE session_id = p_id;
    DELETE FROM __agents_sessions WHERE session_id = p_id;
    RETURN true;
END
$$;
