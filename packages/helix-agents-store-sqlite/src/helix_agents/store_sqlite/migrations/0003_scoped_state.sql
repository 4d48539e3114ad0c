-- helix-agents SQLite schema: scoped state (docs/scoped-state.md).

-- One row per key of an app, user or session map; value is JSON text.
-- A session's map has scope 'session' and its session id as owner.
CREATE TABLE __agents_scoped_state (
    scope TEXT NOT NULL,
    owner TEXT NOT NULL,
    key   TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (scope, owner, key)
) WITHOUT ROWID;
