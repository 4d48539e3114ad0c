-- helix-agents session store, migration 4: fast paths for a conversation's turn.
--
-- Most commits are plain appends: rows with (or without) an expected count,
-- and no run start, rewind, fence, deliveries or commit id. For those, steps
-- 2, 3 and 5 of SPEC §5 have nothing to check, so __agents_commit now checks
-- only the session (step 1) and the expected count (step 4) and skips the
-- statements of the other steps; the order of the checks is unchanged for
-- every commit. The rows are inserted and counted in one statement.
--
-- The rows of __agents_messages no longer reference the session row: that
-- foreign key cost a lookup of the session row per inserted row, although
-- every writer of rows holds the session row lock already. Deleting a session
-- goes through __agents_delete, which takes that lock and deletes the rows.
--
-- Reading the last rows goes through __agents_tail: a PL/pgSQL function keeps
-- the plan of its query for the connection, where the same SELECT sent as a
-- statement would be planned on every call (the store prepares nothing on
-- the server, for PgBouncer's transaction pooling).

ALTER TABLE __agents_messages DROP CONSTRAINT __agents_messages_session_id_fkey;

-- Delete a session and everything it holds; true if it existed. Under the row
-- lock, so a commit of the session either lands before (and its rows go too)
-- or finds no session.
CREATE FUNCTION __agents_delete(p_session text)
RETURNS boolean LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    PERFORM 1 FROM __agents_sessions WHERE session_id = p_session FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    DELETE FROM __agents_messages WHERE session_id = p_session;
    DELETE FROM __agents_sessions WHERE session_id = p_session;
    RETURN true;
END
$$;

-- The last p_limit rows of a session (every row with a NULL limit), newest first:
-- a single (NULL, NULL) when it has none, and nothing when there is no session.
CREATE FUNCTION __agents_tail(p_session text, p_limit bigint)
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

CREATE OR REPLACE FUNCTION __agents_commit(
    p_session text, p_rows jsonb, p_commit jsonb, p_now timestamptz, p_max_messages bigint
) RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    s          __agents_sessions%ROWTYPE;
    v_n        bigint := jsonb_array_length(p_rows);
    v_run      text := p_commit->>'run';
    v_rewind   bigint := (p_commit->>'rewind')::bigint;
    v_fence    text := p_commit->>'fence';
    v_expect   bigint := (p_commit->>'expect')::bigint;
    v_id       text := p_commit->>'id';
    v_ci       jsonb := coalesce(p_commit->'ci', '[]');
    v_la       jsonb := coalesce(p_commit->'la', '[]');
    v_plain    boolean;
    v_run_used boolean := false;
    v_reason   text;
    v_base     bigint;
    v_count    bigint;
    v_first    bigint;
    v_ui       bigint;
BEGIN
    -- 1. The session exists.
    SELECT * INTO s FROM __agents_sessions WHERE session_id = p_session FOR UPDATE;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('refused', 'session_not_found');
    END IF;
    v_plain := v_run IS NULL AND v_rewind IS NULL AND v_fence IS NULL AND v_id IS NULL
        AND v_ci = '[]' AND v_la = '[]';

    IF v_plain THEN
        -- Steps 2, 3 and 5 have nothing to check; 4. the expected count.
        IF v_expect IS NOT NULL AND v_expect <> s.message_count THEN
            v_reason := 'count_conflict';
        END IF;
    ELSE
        -- 1. A landed commit id replays its result.
        IF v_id IS NOT NULL THEN
            SELECT c.first_index, c.message_count INTO v_base, v_count
            FROM __agents_commits c WHERE c.session_id = p_session AND c.commit_id = v_id;
            IF FOUND THEN
                RETURN jsonb_build_object(
                    'first_index', v_base, 'message_count', v_count, 'replayed', true);
            END IF;
        END IF;
        IF v_run IS NOT NULL THEN
            v_run_used := EXISTS (
                SELECT 1 FROM __agents_runs r WHERE r.session_id = p_session AND r.run_id = v_run);
        END IF;

        -- 2. Well formed: row offsets, then the run start.
        IF EXISTS (
            SELECT 1 FROM jsonb_array_elements(v_ci || v_la) d
            WHERE (d->>1)::bigint NOT BETWEEN 0 AND v_n - 1
        ) THEN
            v_reason := 'invalid';
        ELSIF v_run IS NOT NULL
            AND (v_rewind > s.message_count OR v_fence IS NOT NULL OR v_run_used) THEN
            v_reason := 'invalid';
        -- 3. The fence.
        ELSIF v_fence IS NOT NULL
            AND NOT __agents_fenced(s, v_fence) THEN
            v_reason := 'superseded';
        -- 4. The expected count (ignored with a run start).
        ELSIF v_run IS NULL AND v_expect IS NOT NULL AND v_expect <> s.message_count THEN
            v_reason := 'count_conflict';
        -- 5. The deliveries: each named once, queued, and not delivered (unless the rewind re-opens it).
        ELSIF (SELECT count(*) <> count(DISTINCT d->>0) FROM jsonb_array_elements(v_ci) d)
            OR EXISTS (
                SELECT 1 FROM jsonb_array_elements(v_ci) d
                LEFT JOIN __agents_context_items i
                    ON i.session_id = p_session AND i.item_key = d->>0
                WHERE i.item_key IS NULL
                    OR (i.delivered_at IS NOT NULL
                        AND (v_rewind IS NULL OR i.delivered_at < v_rewind))
            ) THEN
            v_reason := 'context_conflict';
        ELSIF (SELECT count(*) <> count(DISTINCT d->>0) FROM jsonb_array_elements(v_la) d)
            OR EXISTS (
                SELECT 1 FROM jsonb_array_elements(v_la) d
                LEFT JOIN __agents_late_answers a
                    ON a.session_id = p_session AND a.call_id = d->>0
                WHERE a.call_id IS NULL
                    OR (a.delivered_at IS NOT NULL
                        AND (v_rewind IS NULL OR a.delivered_at < v_rewind))
            ) THEN
            v_reason := 'late_conflict';
        -- The rewind cannot reach below the rows retention kept.
        ELSIF v_rewind < s.first_index THEN
            v_reason := 'retention';
        END IF;
    END IF;

    IF v_reason IS NOT NULL THEN
        RETURN __agents_refusal(v_reason, s) || jsonb_build_object(
            'run_used', v_run_used,
            'ci', (SELECT coalesce(jsonb_object_agg(i.item_key, i.delivered_at), '{}')
                   FROM __agents_context_items i
                   WHERE i.session_id = p_session
                     AND i.item_key IN (SELECT d->>0 FROM jsonb_array_elements(v_ci) d)),
            'la', (SELECT coalesce(jsonb_object_agg(a.call_id, a.delivered_at), '{}')
                   FROM __agents_late_answers a
                   WHERE a.session_id = p_session
                     AND a.call_id IN (SELECT d->>0 FROM jsonb_array_elements(v_la) d)));
    END IF;

    -- The write: rewind, run start, rows, deliveries, commit id, retention, activity.
    v_base := s.message_count;
    v_ui := s.ui_count;
    IF v_rewind IS NOT NULL THEN
        v_ui := v_ui - __agents_cut(p_session, v_rewind);
        v_base := v_rewind;
    END IF;
    IF v_run IS NOT NULL THEN
        INSERT INTO __agents_runs (session_id, run_id) VALUES (p_session, v_run);
        s.run_id := v_run;
        s.run_status := 'live';
        s.run_started_at := p_now;
        s.run_ended_at := NULL;
    END IF;
    WITH added AS (
        INSERT INTO __agents_messages (session_id, idx, is_context, body)
        SELECT p_session, v_base + r.ord - 1, r.body->>'role' = 'context', r.body
        FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS r(body, ord)
        RETURNING is_context
    )
    SELECT v_ui + count(*) FILTER (WHERE NOT is_context) INTO v_ui FROM added;
    IF v_ci <> '[]' THEN
        UPDATE __agents_context_items i SET delivered_at = v_base + (d->>1)::bigint
        FROM jsonb_array_elements(v_ci) d
        WHERE i.session_id = p_session AND i.item_key = d->>0;
    END IF;
    IF v_la <> '[]' THEN
        UPDATE __agents_late_answers a SET delivered_at = v_base + (d->>1)::bigint
        FROM jsonb_array_elements(v_la) d
        WHERE a.session_id = p_session AND a.call_id = d->>0;
    END IF;
    v_count := v_base + v_n;
    IF v_id IS NOT NULL THEN
        INSERT INTO __agents_commits (session_id, commit_id, first_index, message_count)
        VALUES (p_session, v_id, v_base, v_count);
    END IF;
    v_first := s.first_index;
    IF p_max_messages IS NOT NULL AND v_count - v_first > p_max_messages THEN
        v_first := v_count - p_max_messages;
        DELETE FROM __agents_messages WHERE session_id = p_session AND idx < v_first;
    END IF;
    UPDATE __agents_sessions SET
        message_count = v_count,
        first_index = v_first,
        ui_count = v_ui,
        run_id = s.run_id,
        run_status = s.run_status,
        run_started_at = s.run_started_at,
        run_ended_at = s.run_ended_at,
        last_activity_at = __agents_next_activity(s.last_activity_at, p_now)
    WHERE session_id = p_session;
    RETURN jsonb_build_object('first_index', v_base, 'message_count', v_count, 'replayed', false);
END
$$;
