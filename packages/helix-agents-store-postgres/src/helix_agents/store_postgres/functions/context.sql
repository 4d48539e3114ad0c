-- helix-agents session store: the context store (docs/context-strategies.md).
--
-- A repeatable source file: applied with CREATE OR REPLACE, in the schema's
-- migration transaction, whenever its text changes (see _migrations.py and
-- docs/backends/postgres.md, Migrations). Edit the function here; never
-- re-paste it into a numbered migration. A change of a function's arguments
-- or result type needs a numbered migration that drops the old one first.
--
-- The tables are migrations/0001_initial.sql's; the trigger __agents_rows_removed
-- on __agents_messages is created there and runs the function defined here.

-- The text a history search looks in; the same as core's row_text().
CREATE OR REPLACE FUNCTION __agents_row_text(b jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT concat_ws(E'\n',
        CASE WHEN b->>'role' = 'context' THEN b->>'content' END,
        CASE WHEN b->>'role' <> 'context' AND jsonb_typeof(b->'content') = 'string'
             THEN b->>'content' END,
        CASE WHEN b->>'role' <> 'context' AND jsonb_typeof(b->'content') = 'array' THEN
            (SELECT string_agg(p->>'text', E'\n' ORDER BY n)
             FROM jsonb_array_elements(b->'content') WITH ORDINALITY AS e(p, n)
             WHERE jsonb_typeof(p->'text') = 'string') END,
        CASE WHEN b->>'role' <> 'context' AND jsonb_typeof(b->'tool_calls') = 'array' THEN
            (SELECT string_agg(c->'function'->>'name' || '(' ||
                 CASE WHEN jsonb_typeof(c->'function'->'arguments') = 'string'
                      THEN c->'function'->>'arguments' ELSE '' END || ')', E'\n' ORDER BY n)
             FROM jsonb_array_elements(b->'tool_calls') WITH ORDINALITY AS e(c, n)
             WHERE jsonb_typeof(c->'function'->'name') = 'string') END)
$$;

-- Whether a row is about tool p_tool: a tool row by its name, any other chat row by its calls.
CREATE OR REPLACE FUNCTION __agents_row_has_tool(b jsonb, p_tool text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN b->>'role' = 'context' THEN false
        WHEN b->>'role' = 'tool' THEN b->>'name' = p_tool AND jsonb_typeof(b->'name') = 'string'
        WHEN jsonb_typeof(b->'tool_calls') = 'array' THEN EXISTS (
            SELECT 1 FROM jsonb_array_elements(b->'tool_calls') c
            WHERE jsonb_typeof(c->'function'->'name') = 'string'
              AND c->'function'->>'name' = p_tool)
        ELSE false
    END
$$;

-- Store an output, or return the reference already stored under the caller's key.
CREATE OR REPLACE FUNCTION __agents_store_output(
    p_session text, p_output text, p_key text, p_ref jsonb, p_content text, p_now timestamptz
) RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    l record := __agents_lock(p_session, NULL);
    s __agents_sessions%ROWTYPE := l.s;
    v_ref jsonb;
BEGIN
    IF l.refusal IS NOT NULL THEN RETURN l.refusal; END IF;
    IF p_key IS NOT NULL THEN
        SELECT ref INTO v_ref FROM __agents_outputs
        WHERE session_id = p_session AND caller_key = p_key;
        IF FOUND THEN
            RETURN jsonb_build_object('replayed', v_ref);
        END IF;
    END IF;
    INSERT INTO __agents_outputs (session_id, output_id, caller_key, ref, content)
    VALUES (p_session, p_output, p_key, p_ref, p_content);
    PERFORM __agents_touch(s, p_now);
    RETURN '{}';
END
$$;

-- Record a compaction: its summary, the new window start and (p_preserve) the
-- preservation of the session's history, under the session row lock.
CREATE OR REPLACE FUNCTION __agents_compact(
    p_session text, p_boundary bigint, p_expect bigint, p_preserve boolean,
    p_summary jsonb, p_now timestamptz
) RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    l record := __agents_lock(p_session, NULL);
    s __agents_sessions%ROWTYPE := l.s;
    v_number   bigint := 0;
    v_start    bigint := 0;
    v_preserved boolean;
BEGIN
    IF l.refusal IS NOT NULL THEN RETURN l.refusal; END IF;
    SELECT number, boundary INTO v_number, v_start FROM __agents_compactions
    WHERE session_id = p_session ORDER BY number DESC LIMIT 1;
    IF NOT FOUND THEN
        v_number := 0;
        v_start := 0;
    END IF;
    IF (p_expect IS NOT NULL AND p_expect <> v_start)
       OR p_boundary <= v_start OR p_boundary > s.message_count THEN
        RETURN jsonb_build_object(
            'refused', 'compaction', 'start', v_start, 'count', s.message_count);
    END IF;
    INSERT INTO __agents_compactions (session_id, number, boundary, summary)
    VALUES (p_session, v_number + 1, p_boundary, p_summary);
    IF p_preserve THEN
        INSERT INTO __agents_preserved (session_id) VALUES (p_session) ON CONFLICT DO NOTHING;
    END IF;
    v_preserved := EXISTS (SELECT 1 FROM __agents_preserved WHERE session_id = p_session);
    PERFORM __agents_touch(s, p_now);
    RETURN jsonb_build_object('number', v_number + 1, 'preserved', v_preserved);
END
$$;

-- clear_session: the rows and queues (__agents_clear), then the context store.
CREATE OR REPLACE FUNCTION __agents_clear_all(p_session text, p_now timestamptz)
RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    v_result jsonb;
BEGIN
    v_result := __agents_clear(p_session, p_now);
    IF NOT v_result ? 'refused' THEN
        DELETE FROM __agents_outputs WHERE session_id = p_session;
        DELETE FROM __agents_compactions WHERE session_id = p_session;
        DELETE FROM __agents_archive WHERE session_id = p_session;
        DELETE FROM __agents_preserved WHERE session_id = p_session;
    END IF;
    RETURN v_result;
END
$$;

-- Whatever statement removes rows (retention, truncate, a rewind, and any
-- later writer), the context store follows: rows cut from the top of the log
-- (nothing remains above them) make the compactions past the cut stale
-- (CS-11); rows removed from below the rows that remain are retention's, and
-- a preserved session archives them (CS-9).
CREATE OR REPLACE FUNCTION __agents_rows_removed() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    DELETE FROM __agents_compactions c
    USING (SELECT session_id, min(idx) AS cut FROM gone GROUP BY session_id) g
    WHERE c.session_id = g.session_id AND c.boundary > g.cut
      AND NOT EXISTS (
          SELECT 1 FROM __agents_messages m WHERE m.session_id = g.session_id AND m.idx > g.cut);
    INSERT INTO __agents_archive (session_id, idx, body)
    SELECT g.session_id, g.idx, g.body
    FROM gone g JOIN __agents_preserved p ON p.session_id = g.session_id
    WHERE EXISTS (
        SELECT 1 FROM __agents_messages m WHERE m.session_id = g.session_id AND m.idx > g.idx)
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;
