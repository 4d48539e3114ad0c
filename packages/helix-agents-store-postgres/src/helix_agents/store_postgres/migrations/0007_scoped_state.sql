-- helix-agents PostgreSQL schema: scoped state (docs/scoped-state.md).

-- One row per key of an app, user or session map. A session's map has scope 'session' and
-- its session id as owner; two commits setting different keys of one map touch different rows.
CREATE TABLE __agents_scoped_state (
    scope text  NOT NULL,
    owner text  NOT NULL,
    key   text  NOT NULL,
    value jsonb NOT NULL,
    PRIMARY KEY (scope, owner, key)
);

-- The commit with its deltas (p_scoped: [[scope, owner, key, value], ...]), in one call:
-- the deltas are written only when the commit landed (not refused, not replayed), in its
-- transaction and under its session row lock.
CREATE FUNCTION __agents_commit_scoped(
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
CREATE FUNCTION __agents_clear_scoped(p_session text, p_now timestamptz)
RETURNS jsonb LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    v_result jsonb;
BEGIN
    v_result := __agents_clear_all(p_session, p_now);
    DELETE FROM __agents_scoped_state WHERE scope = 'session' AND owner = p_session;
    RETURN v_result;
END
$$;

CREATE FUNCTION __agents_delete_scoped(p_session text)
RETURNS boolean LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    v_found boolean;
BEGIN
    v_found := __agents_delete(p_session);
    DELETE FROM __agents_scoped_state WHERE scope = 'session' AND owner = p_session;
    RETURN v_found;
END
$$;
