"""helix-agents SQLite session store: the embedded default, core's store over one SQLite file."""

from ._url import open_url
from .engine import SQLiteEngine
from .schema import database_file, migrate, migration_names, pending_migrations
from .store import SQLiteStateStore

__all__ = [
    "SQLiteEngine",
    "SQLiteStateStore",
    "database_file",
    "migrate",
    "migration_names",
    "open_url",
    "pending_migrations",
]
