"""helix-agents PostgreSQL session store (psycopg 3 async, psycopg_pool).

The store is core's ``StoreBase`` over :class:`PostgresEngine`: a read is one call
of ``__agents_snapshot``, a write one call of ``__agents_apply``, the version-guarded
applier. See ``docs/backends/postgres.md``.
"""

from ._config import PoolSettings
from ._engine import PostgresEngine
from ._errors import MigrationError
from ._migrations import migrate
from .errors import ReplicationLagError
from .schema import conninfo_and_schema, migration_names, pending_migrations
from .store import PostgresStateStore, open_url

__all__ = [
    "MigrationError",
    "PoolSettings",
    "PostgresEngine",
    "PostgresStateStore",
    "ReplicationLagError",
    "conninfo_and_schema",
    "migrate",
    "migration_names",
    "open_url",
    "pending_migrations",
]
