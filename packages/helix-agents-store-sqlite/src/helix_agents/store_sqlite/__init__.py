"""helix-agents SQLite session store: the embedded default, on one file through aiosqlite."""

from ._url import open_url
from .store import SQLiteStateStore

__all__ = ["SQLiteStateStore", "open_url"]
