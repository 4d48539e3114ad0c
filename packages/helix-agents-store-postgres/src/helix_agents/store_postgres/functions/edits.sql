-- helix-agents session store: pop and replace, one call each.
--
-- A repeatable source file: applied with CREATE OR REPLACE, in the schema's
-- migration transaction, whenever its text changes (see _migrations.py and
-- docs/backends/postgres.md, Migrations). Edit the function here; never
-- re-paste it into a numbered migration. A change of a function's arguments
-- or result type needs a numbered migration that drops the old one first.
--
-- Both lock the session row (SELECT ... FOR UPDATE), so they are serialised
-- with the commit and every other writer of the session, and cut the log with
-- __agents_cut (commit.sql): the side effects of a truncate (a pop writes as a
-- truncate does, __agents_cut_to in writes.sql). The client has already checked
-- what needs no state (a pop's count, a replace's keep and rows); these
-- functions run the checks that need the session, in the order of the
-- reference store, and return a refusal as __agents_refusal(...) for the
-- client to replay core's checks on.

-- Remove the newest p_count rows retention kept; return their bodies as text,
-- oldest first. An empty log returns no rows and writes nothing.
CREATE OR REPLACE FUNCTION __agents_pop(
    p_session text, p_count bigint, p_fence text, p_now timestamptz
) RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    l record := __agents_lock(p_session, p_fence);
    s __agents_sessions%ROWTYPE := l.s;
    v_keep bigint;
    v_rows jsonb;
BEGIN
    IF l.refusal IS NOT NULL THEN RETURN l.refusal; END IF;
    -- core.pop_keep: only rows retention kept can go.
    v_keep := s.message_count - least(p_count, s.message_count - s.first_index);
    IF v_keep = s.message_count THEN
        RETURN jsonb_build_object('rows', '[]'::jsonb);
    END IF;
    SELECT jsonb_agg(m.body::text ORDER BY m.idx) INTO v_rows
    FROM __agents_messages m WHERE m.session_id = p_session AND m.idx >= v_keep;
    PERFORM __agents_cut_to(s, v_keep, p_now);
    RETURN jsonb_build_object('rows', v_rows);
END
$$;

-- If the log holds p_expect rows, cut it to p_keep rows and append p_rows.
-- Checks after the session: the fence, the expected count, retention.
CREATE OR REPLACE FUNCTION __agents_replace(
    p_session text, p_keep bigint, p_rows jsonb, p_expect bigint, p_fence text,
    p_now timestamptz, p_max_messages bigint
) RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    l record := __agents_lock(p_session, NULL);
    s __agents_sessions%ROWTYPE := l.s;
    v_reason text;
    v_count  bigint := p_keep + jsonb_array_length(p_rows);
    v_first  bigint;
    v_ui     bigint;
BEGIN
    IF l.refusal IS NOT NULL THEN RETURN l.refusal; END IF;
    IF NOT __agents_fenced(s, p_fence) THEN
        v_reason := 'superseded';
    ELSIF p_expect <> s.message_count THEN
        v_reason := 'count_conflict';
    ELSIF p_keep < s.first_index THEN
        v_reason := 'retention';
    END IF;
    IF v_reason IS NOT NULL THEN
        RETURN __agents_refusal(v_reason, s);
    END IF;
    v_ui := s.ui_count - __agents_cut(p_session, p_keep);
    WITH added AS (
        INSERT INTO __agents_messages (session_id, idx, is_context, body)
        SELECT p_session, p_keep + r.ord - 1, r.body->>'role' = 'context', r.body
        FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS r(body, ord)
        RETURNING is_context
    )
    SELECT v_ui + count(*) FILTER (WHERE NOT is_context) INTO v_ui FROM added;
    v_first := s.first_index;
    IF p_max_messages IS NOT NULL AND v_count - v_first > p_max_messages THEN
        v_first := v_count - p_max_messages;
        DELETE FROM __agents_messages WHERE session_id = p_session AND idx < v_first;
    END IF;
    UPDATE __agents_sessions SET
        message_count = v_count,
        first_index = v_first,
        ui_count = v_ui,
        last_activity_at = __agents_next_activity(s.last_activity_at, p_now)
    WHERE session_id = p_session;
    RETURN jsonb_build_object('first_index', p_keep, 'message_count', v_count, 'replayed', false);
END
$$;
