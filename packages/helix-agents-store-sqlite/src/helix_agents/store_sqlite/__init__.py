"""helix-agents SQLite session store: the embedded default, on one file through aiosqlite."""

from ._url import open_url
from .schema import database_file, migrate, migration_names, pending_migrations
from .store import SQLiteStateStore

__all__ = [
    "SQLiteStateStore",
    "database_file",
    "migrate",
    "migration_names",
    "open_url",
    "pending_migrations",
]
