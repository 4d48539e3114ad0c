-- helix-agents session store: every other write, one call each.
--
-- A repeatable source file: applied with CREATE OR REPLACE, in the schema's
-- migration transaction, whenever its text changes (see _migrations.py and
-- docs/backends/postgres.md, Migrations). Edit the function here; never
-- re-paste it into a numbered migration. A change of a function's arguments
-- or result type needs a numbered migration that drops the old one first.
--
-- Each function locks the session row (SELECT ... FOR UPDATE), so it is
-- serialised with the commit and every other writer of the session, checks in
-- the order of the reference store, and writes only if every check passed.
-- A refusal is returned as __agents_refusal(...) (see commit.sql); the client
-- replays core's checks on it to raise the exact error. Landed writes move
-- last_activity_at forward; refused and no-op writes leave it alone.

-- A session as the client reads it (metadata as JSON text, so the client decodes it).
CREATE OR REPLACE FUNCTION __agents_info(s __agents_sessions)
RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'id', s.session_id,
        'user_id', s.user_id,
        'created_at', s.created_at,
        'last_activity_at', s.last_activity_at,
        'message_count', s.message_count,
        'current_run', CASE WHEN s.run_id IS NULL THEN NULL ELSE jsonb_build_object(
            'run_id', s.run_id, 'status', s.run_status,
            'started_at', s.run_started_at, 'ended_at', s.run_ended_at) END,
        'metadata', s.metadata::text)
$$;

-- The preamble of a session write: the session row, locked FOR UPDATE, and the
-- refusal that ends the write before anything else (NULL when it may go on): no
-- such session, then a stale fence (p_fence NULL: no fence; a write whose other
-- checks come before the fence passes NULL and checks the fence itself).
-- A caller declares ``l record := __agents_lock(...)`` (a plpgsql INTO list cannot
-- hold a row) and returns ``l.refusal`` when it is not NULL: three lines every
-- session write restates, as PL/pgSQL cannot share a declaration or an early return.
CREATE OR REPLACE FUNCTION __agents_lock(
    p_session text, p_fence text, OUT s __agents_sessions, OUT refusal jsonb
) LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    SELECT * INTO s FROM __agents_sessions WHERE session_id = p_session FOR UPDATE;
    IF NOT FOUND THEN
        refusal := jsonb_build_object('refused', 'session_not_found');
    ELSIF NOT __agents_fenced(s, p_fence) THEN
        refusal := __agents_refusal('superseded', s);
    END IF;
END
$$;

-- A landed write moves the session's last activity forward.
CREATE OR REPLACE FUNCTION __agents_touch(s __agents_sessions, p_now timestamptz)
RETURNS void LANGUAGE sql SET search_path FROM CURRENT AS $$
    UPDATE __agents_sessions
    SET last_activity_at = __agents_next_activity(s.last_activity_at, p_now)
    WHERE session_id = s.session_id
$$;

-- The end of a write that inserts once per key (p_new: the insert found its key
-- free): a landed one moves the activity forward; the result says which it was.
CREATE OR REPLACE FUNCTION __agents_recorded(s __agents_sessions, p_now timestamptz, p_new boolean)
RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF p_new THEN PERFORM __agents_touch(s, p_now); END IF;
    RETURN jsonb_build_object('recorded', p_new);
END
$$;

-- Cut the log to p_keep rows (__agents_cut) and write the session's counts and
-- activity: the write of a truncate and of a pop. The caller holds the row lock.
CREATE OR REPLACE FUNCTION __agents_cut_to(s __agents_sessions, p_keep bigint, p_now timestamptz)
RETURNS void LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    v_ui bigint;
BEGIN
    v_ui := s.ui_count - __agents_cut(s.session_id, p_keep);
    UPDATE __agents_sessions SET
        message_count = p_keep,
        ui_count = v_ui,
        last_activity_at = __agents_next_activity(s.last_activity_at, p_now)
    WHERE session_id = s.session_id;
END
$$;

CREATE OR REPLACE FUNCTION __agents_truncate(
    p_session text, p_keep bigint, p_fence text, p_now timestamptz
) RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    l record := __agents_lock(p_session, NULL);
    s __agents_sessions%ROWTYPE := l.s;
    v_reason text;
BEGIN
    IF l.refusal IS NOT NULL THEN RETURN l.refusal; END IF;
    IF p_keep < 0 OR p_keep > s.message_count THEN
        v_reason := 'invalid';
    ELSIF NOT __agents_fenced(s, p_fence) THEN
        v_reason := 'superseded';
    ELSIF p_keep < s.first_index THEN
        v_reason := 'retention';
    END IF;
    IF v_reason IS NOT NULL THEN
        RETURN __agents_refusal(v_reason, s);
    END IF;
    PERFORM __agents_cut_to(s, p_keep, p_now);
    RETURN '{}';
END
$$;

CREATE OR REPLACE FUNCTION __agents_finish_run(
    p_session text, p_run text, p_status text, p_now timestamptz
) RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    l record := __agents_lock(p_session, NULL);
    s __agents_sessions%ROWTYPE := l.s;
BEGIN
    IF l.refusal IS NOT NULL THEN RETURN l.refusal; END IF;
    IF p_status NOT IN ('completed', 'failed', 'cancelled', 'awaiting_approval') THEN
        RETURN __agents_refusal('invalid', s);
    END IF;
    IF NOT __agents_fenced(s, p_run) THEN
        RETURN __agents_refusal('superseded', s);
    END IF;
    UPDATE __agents_sessions SET
        run_status = p_status,
        run_ended_at = p_now,
        last_activity_at = __agents_next_activity(s.last_activity_at, p_now)
    WHERE session_id = p_session;
    RETURN '{}';
END
$$;

-- Queue a context item (p_late false) or a late answer (p_late true), once per key.
CREATE OR REPLACE FUNCTION __agents_record(
    p_session text, p_late boolean, p_key text, p_at timestamptz, p_body jsonb,
    p_fence text, p_now timestamptz
) RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    l record := __agents_lock(p_session, p_fence);
    s __agents_sessions%ROWTYPE := l.s;
BEGIN
    IF l.refusal IS NOT NULL THEN RETURN l.refusal; END IF;
    IF p_late THEN
        INSERT INTO __agents_late_answers (session_id, call_id, at, body)
        VALUES (p_session, p_key, p_at, p_body) ON CONFLICT DO NOTHING;
    ELSE
        INSERT INTO __agents_context_items (session_id, item_key, at, body)
        VALUES (p_session, p_key, p_at, p_body) ON CONFLICT DO NOTHING;
    END IF;
    RETURN __agents_recorded(s, p_now, FOUND);
END
$$;

-- Add approvals once per id; an id that was resolved stays resolved.
CREATE OR REPLACE FUNCTION __agents_add_approvals(
    p_session text, p_ids text[], p_requested timestamptz[], p_bodies jsonb[],
    p_fence text, p_now timestamptz
) RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    l record := __agents_lock(p_session, p_fence);
    s __agents_sessions%ROWTYPE := l.s;
BEGIN
    IF l.refusal IS NOT NULL THEN RETURN l.refusal; END IF;
    INSERT INTO __agents_approvals (session_id, approval_id, requested_at, body)
    SELECT p_session, a.id, a.requested_at, a.body
    FROM unnest(p_ids, p_requested, p_bodies) WITH ORDINALITY AS a(id, requested_at, body, ord)
    ORDER BY a.ord
    ON CONFLICT DO NOTHING;
    PERFORM __agents_recorded(s, p_now, FOUND);
    RETURN '{}';
END
$$;

CREATE OR REPLACE FUNCTION __agents_resolve_approval(
    p_session text, p_approval text, p_now timestamptz
) RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    l record := __agents_lock(p_session, NULL);
    s __agents_sessions%ROWTYPE := l.s;
    v_resolved boolean;
BEGIN
    IF l.refusal IS NOT NULL THEN RETURN l.refusal; END IF;
    SELECT a.resolved INTO v_resolved FROM __agents_approvals a
    WHERE a.session_id = p_session AND a.approval_id = p_approval;
    IF NOT FOUND THEN
        RETURN __agents_refusal('approval_not_found', s);
    END IF;
    IF v_resolved THEN
        RETURN jsonb_build_object('resolution', 'already-resolved');
    END IF;
    UPDATE __agents_approvals SET resolved = true
    WHERE session_id = p_session AND approval_id = p_approval;
    PERFORM __agents_touch(s, p_now);
    RETURN jsonb_build_object('resolution', 'resolved');
END
$$;

CREATE OR REPLACE FUNCTION __agents_save_checkpoint(
    p_session text, p_checkpoint text, p_message_count bigint, p_created timestamptz,
    p_body jsonb, p_fence text, p_now timestamptz
) RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    l record := __agents_lock(p_session, NULL);
    s __agents_sessions%ROWTYPE := l.s;
BEGIN
    IF l.refusal IS NOT NULL THEN RETURN l.refusal; END IF;
    IF p_message_count > s.message_count THEN
        RETURN __agents_refusal('invalid', s);
    END IF;
    IF NOT __agents_fenced(s, p_fence) THEN
        RETURN __agents_refusal('superseded', s);
    END IF;
    INSERT INTO __agents_checkpoints
        (session_id, checkpoint_id, message_count, created_at, body)
    VALUES (p_session, p_checkpoint, p_message_count, p_created, p_body)
    ON CONFLICT DO NOTHING;
    RETURN __agents_recorded(s, p_now, FOUND);
END
$$;

-- Drop rows, items, late answers, approvals (resolved ones too), checkpoints and
-- commit ids; keep the session, its user, metadata and used run ids; cancel a live run.
CREATE OR REPLACE FUNCTION __agents_clear(p_session text, p_now timestamptz)
RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    l record := __agents_lock(p_session, NULL);
    s __agents_sessions%ROWTYPE := l.s;
BEGIN
    IF l.refusal IS NOT NULL THEN RETURN l.refusal; END IF;
    DELETE FROM __agents_messages WHERE session_id = p_session;
    DELETE FROM __agents_context_items WHERE session_id = p_session;
    DELETE FROM __agents_late_answers WHERE session_id = p_session;
    DELETE FROM __agents_approvals WHERE session_id = p_session;
    DELETE FROM __agents_checkpoints WHERE session_id = p_session;
    DELETE FROM __agents_commits WHERE session_id = p_session;
    UPDATE __agents_sessions SET
        message_count = 0,
        first_index = 0,
        ui_count = 0,
        run_status = CASE WHEN run_status = 'live' THEN 'cancelled' ELSE run_status END,
        run_ended_at = CASE WHEN run_status = 'live' THEN p_now ELSE run_ended_at END,
        last_activity_at = __agents_next_activity(s.last_activity_at, p_now)
    WHERE session_id = p_session;
    RETURN '{}';
END
$$;

-- Copy rows [0, up_to) and the checkpoints in range into a new session p_target.
CREATE OR REPLACE FUNCTION __agents_clone(
    p_source text, p_target text, p_up_to bigint, p_now timestamptz
) RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    s     __agents_sessions%ROWTYPE;
    t     __agents_sessions%ROWTYPE;
    v_end bigint;
BEGIN
    -- A share lock keeps writers of the source out while it is copied.
    SELECT * INTO s FROM __agents_sessions WHERE session_id = p_source FOR SHARE;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('refused', 'session_not_found');
    END IF;
    v_end := coalesce(p_up_to, s.message_count);
    IF v_end < s.first_index OR v_end > s.message_count THEN
        RETURN __agents_refusal('invalid', s);
    END IF;
    INSERT INTO __agents_sessions
        (session_id, user_id, created_at, last_activity_at, metadata,
         message_count, first_index, ui_count)
    VALUES (
        p_target, s.user_id, p_now, p_now, s.metadata, v_end, s.first_index,
        s.ui_count - (SELECT count(*) FROM __agents_messages m
                      WHERE m.session_id = p_source AND m.idx >= v_end AND NOT m.is_context))
    ON CONFLICT DO NOTHING
    RETURNING * INTO t;
    IF NOT FOUND THEN
        RETURN __agents_refusal('exists', s);
    END IF;
    INSERT INTO __agents_messages (session_id, idx, is_context, body)
    SELECT p_target, m.idx, m.is_context, m.body FROM __agents_messages m
    WHERE m.session_id = p_source AND m.idx < v_end;
    INSERT INTO __agents_checkpoints
        (session_id, checkpoint_id, message_count, created_at, body)
    SELECT p_target, c.checkpoint_id, c.message_count, c.created_at, c.body
    FROM __agents_checkpoints c
    WHERE c.session_id = p_source AND c.message_count <= v_end;
    RETURN __agents_info(t);
END
$$;

-- Delete a session and everything it holds; true if it existed. Under the row
-- lock, so a commit of the session either lands before (and its rows go too)
-- or finds no session.
CREATE OR REPLACE FUNCTION __agents_delete(p_session text)
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
