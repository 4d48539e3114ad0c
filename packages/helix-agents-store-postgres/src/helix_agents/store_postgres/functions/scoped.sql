-- helix-agents session store: scoped state around the commit, clear and delete
-- (docs/scoped-state.md; the table is migrations/0001_initial.sql's).
--
-- A repeatable source file: applied with CREATE OR REPLACE whenever its text changes
-- (see _migrations.py). The store calls these wrappers instead of the functions they
-- wrap, so each call stays one round trip.

-- The commit with its deltas (p_scoped: [[scope, owner, key, value], ...]), in one call:
-- the deltas are written only when the commit landed (not refused, not replayed), in its
-- transaction and under its session row lock.
CREATE OR REPLACE FUNCTION __agents_commit_scoped(
    p_session text, p_rows jsonb, p_commit jsonb, p_now timestamptz, p_max_messages bigint,
    p_scoped jsonb
) RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    v_result jsonb;
BEGIN
    v_result := __agents_commit(p_session, p_rows, p_commit, p_now, p_max_messages);
    IF p_scoped <> '[]' AND NOT v_result ? 'refused' AND NOT (v_result->>'replayed')::boolean
    THEN
        INSERT INTO __agents_scoped_state (scope, owner, key, value)
        SELECT d->>0, d->>1, d->>2, d->3 FROM jsonb_array_elements(p_scoped) d
        ON CONFLICT (scope, owner, key) DO UPDATE SET value = excluded.value;
    END IF;
    RETURN v_result;
END
$$;

-- Clear and delete forget the session's own map, after the session row is locked, so a
-- commit racing them is either before (its keys go) or after (it finds the session).
CREATE OR REPLACE FUNCTION __agents_clear_scoped(p_session text, p_now timestamptz)
RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    v_result jsonb;
BEGIN
    v_result := __agents_clear_all(p_session, p_now);
    DELETE FROM __agents_scoped_state WHERE scope = 'session' AND owner = p_session;
    RETURN v_result;
END
$$;

CREATE OR REPLACE FUNCTION __agents_delete_scoped(p_session text)
RETURNS boolean LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    v_found boolean;
BEGIN
    v_found := __agents_delete(p_session);
    DELETE FROM __agents_scoped_state WHERE scope = 'session' AND owner = p_session;
    RETURN v_found;
END
$$;
