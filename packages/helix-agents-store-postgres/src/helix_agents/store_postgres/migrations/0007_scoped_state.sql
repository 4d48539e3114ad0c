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
