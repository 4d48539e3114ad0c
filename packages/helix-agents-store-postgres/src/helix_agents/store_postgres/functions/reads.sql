-- helix-agents session store: reads that keep their plan.
--
-- A repeatable source file: applied with CREATE OR REPLACE, in the schema's
-- migration transaction, whenever its text changes (see _migrations.py and
-- docs/backends/postgres.md, Migrations). Edit the function here; never
-- re-paste it into a numbered migration. A change of a function's arguments
-- or result type needs a numbered migration that drops the old one first.
--
-- A PL/pgSQL function keeps the plan of its query for the connection, where
-- the same SELECT sent unprepared would be planned on every call (the store
-- reads through it when it does not prepare its statements: prepare=off, or
-- an application's pool; docs/backends/postgres.md, PgBouncer).

-- The last p_limit rows of a session (every row with a NULL limit), newest first:
-- a single (NULL, NULL) when it has none, and nothing when there is no session.
CREATE OR REPLACE FUNCTION __agents_tail(p_session text, p_limit bigint)
RETURNS TABLE (row_idx bigint, row_text text)
LANGUAGE plpgsql STABLE SET search_path FROM CURRENT AS $$
BEGIN
    RETURN QUERY
    SELECT m.idx, m.body::text FROM __agents_sessions x
    LEFT JOIN LATERAL (
        SELECT r.idx, r.body FROM __agents_messages r
        WHERE r.session_id = x.session_id ORDER BY r.idx DESC LIMIT p_limit) m ON true
    WHERE x.session_id = p_session;
END
$$;
