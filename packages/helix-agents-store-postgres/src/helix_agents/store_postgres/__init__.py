"""helix-agents PostgreSQL session store (psycopg 3 async, psycopg_pool).

Every operation is one statement, so one round trip; a commit is one call of
the server-side function ``__agents_commit``. See ``docs/backends/postgres.md``.
"""

from ._config import PoolSettings
from ._errors import MigrationError
from ._migrations import migrate
from .schema import conninfo_and_schema, migration_names, pending_migrations
from .store import PostgresStateStore, open_url

__all__ = [
    "MigrationError",
    "PoolSettings",
    "PostgresStateStore",
    "conninfo_and_schema",
    "migrate",
    "migration_names",
    "open_url",
    "pending_migrations",
]
