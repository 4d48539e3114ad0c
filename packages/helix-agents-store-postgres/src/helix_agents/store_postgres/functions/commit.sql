-- helix-agents session store: the commit of docs/commit.md, in one call.
--
-- A repeatable source file: applied with CREATE OR REPLACE, in the schema's
-- migration transaction, whenever its text changes (see _migrations.py and
-- docs/backends/postgres.md, Migrations). Edit the function here; never
-- re-paste it into a numbered migration. A change of a function's arguments
-- or result type needs a numbered migration that drops the old one first.
--
-- __agents_commit is the server-side mirror of helix_agents.core.check_commit
-- plus the write of the plan it returns, so that a commit is ONE round trip.
-- It runs the checks in the order of docs/commit.md (the first failure wins)
-- while holding the session row lock (SELECT ... FOR UPDATE), which serialises
-- every writer of the session, then writes everything in the same transaction.
-- A plain append (no run start, rewind, fence, deliveries or commit id) skips
-- the statements of the steps that have nothing to check; without retention it
-- is one statement, an UPDATE of the session row (its lock, and the expected
-- count) with the INSERT of the rows, and only a miss runs the checks.
--
-- A refused commit writes nothing and returns {"refused": <reason>, ...} with
-- the state the checks saw; the client replays core.check_commit on that state,
-- so every error class, code and message comes from core itself, and a
-- disagreement between this function and core is reported as a bug. Reasons:
--   session_not_found  step 1    SessionNotFoundError
--   invalid            step 2    ValidationError (row_offset, rewind_to, start+fence, reused run id)
--   superseded         step 3    RunSupersededError
--   count_conflict     step 4    MessageCountConflictError
--   context_conflict   step 5    ContextItemDeliveryConflictError
--   late_conflict      step 5    LateAnswerDeliveryConflictError
--   retention          rewind    ValidationError: rewind_to below the rows retention kept
-- A landed (or replayed) commit returns {"first_index", "message_count", "replayed"}.
--
-- p_rows is the JSON array of the rows; p_commit, as the client builds it:
--   {"run": run_id|null, "rewind": int|null, "fence": run_id|null,
--    "expect": int|null, "ci": [[key, row_offset], ...], "la": [[call_id, row_offset], ...],
--    "id": commit_id|null}

-- What a refusal reports about the session: enough for the client to replay core's checks.
CREATE OR REPLACE FUNCTION __agents_refusal(p_reason text, s __agents_sessions)
RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'refused', p_reason,
        'message_count', s.message_count,
        'first_index', s.first_index,
        'run', CASE WHEN s.run_id IS NULL THEN NULL ELSE jsonb_build_object(
            'run_id', s.run_id, 'status', s.run_status,
            'started_at', s.run_started_at, 'ended_at', s.run_ended_at) END)
$$;

-- Whether a write fenced by p_fence may land: no fence, or it names the current live run.
CREATE OR REPLACE FUNCTION __agents_fenced(s __agents_sessions, p_fence text)
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT p_fence IS NULL OR (s.run_id IS NOT DISTINCT FROM p_fence AND s.run_status = 'live')
$$;

-- The activity time of a write: now, but always after the previous one (core.next_activity).
CREATE OR REPLACE FUNCTION __agents_next_activity(p_previous timestamptz, p_now timestamptz)
RETURNS timestamptz LANGUAGE sql STABLE AS $$
    SELECT greatest(p_now, p_previous + interval '1 microsecond')
$$;

-- Drop rows at index >= p_keep and what hung on them: re-open the items and late
-- answers they delivered, forget checkpoints and commit ids beyond. Returns the
-- number of non-context rows removed. The caller holds the session row lock.
CREATE OR REPLACE FUNCTION __agents_cut(p_session text, p_keep bigint)
RETURNS bigint LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    v_ui bigint;
BEGIN
    WITH gone AS (
        DELETE FROM __agents_messages
        WHERE session_id = p_session AND idx >= p_keep
        RETURNING is_context
    )
    SELECT count(*) FILTER (WHERE NOT is_context) INTO v_ui FROM gone;
    UPDATE __agents_context_items SET delivered_at = NULL
    WHERE session_id = p_session AND delivered_at >= p_keep;
    UPDATE __agents_late_answers SET delivered_at = NULL
    WHERE session_id = p_session AND delivered_at >= p_keep;
    DELETE FROM __agents_checkpoints WHERE session_id = p_session AND message_count > p_keep;
    DELETE FROM __agents_commits WHERE session_id = p_session AND message_count > p_keep;
    RETURN v_ui;
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
    v_plain := v_run IS NULL AND v_rewind IS NULL AND v_fence IS NULL AND v_id IS NULL
        AND v_ci = '[]' AND v_la = '[]';
    -- A plain append without retention, in one statement: the UPDATE takes the
    -- session row lock and checks the expected count (steps 1 and 4, re-checked
    -- on the newest row version if it waited), and the rows go in with it. No
    -- row updated means no session or another count: the checks below, under
    -- the lock, say which.
    IF v_plain AND p_max_messages IS NULL THEN
        WITH x AS (
            UPDATE __agents_sessions SET
                message_count = message_count + v_n,
                ui_count = ui_count + v_n - jsonb_array_length(
                    jsonb_path_query_array(p_rows, '$[*] ? (@.role == "context")')),
                last_activity_at = __agents_next_activity(last_activity_at, p_now)
            WHERE session_id = p_session AND (v_expect IS NULL OR message_count = v_expect)
            RETURNING message_count - v_n AS base
        ), added AS (
            INSERT INTO __agents_messages (session_id, idx, is_context, body)
            SELECT p_session, x.base + r.ord - 1, r.body->>'role' = 'context', r.body
            FROM x, jsonb_array_elements(p_rows) WITH ORDINALITY AS r(body, ord)
        )
        SELECT x.base INTO v_base FROM x;
        IF FOUND THEN
            RETURN jsonb_build_object(
                'first_index', v_base, 'message_count', v_base + v_n, 'replayed', false);
        END IF;
    END IF;

    -- 1. The session exists.
    SELECT * INTO s FROM __agents_sessions WHERE session_id = p_session FOR UPDATE;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('refused', 'session_not_found');
    END IF;

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
