"""helix-agents PostgreSQL session store (psycopg 3 async, psycopg_pool).

Every operation is one statement, so one round trip; a commit is one call of
the server-side function ``__agents_commit``. See ``docs/backends/postgres.md``.
"""

from ._config import PoolSettings
from ._errors import MigrationError
from ._migrations import migrate
from .store import PostgresStateStore, open_url

__all__ = ["MigrationError", "PoolSettings", "PostgresStateStore", "migrate", "open_url"]
