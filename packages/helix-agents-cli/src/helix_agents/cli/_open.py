"""Stores as the commands open them: read commands never create or change a store."""

from __future__ import annotations

from helix_agents.core import SessionStateStore, open_store

__all__ = ["open_reading"]


def open_reading(url: str) -> SessionStateStore:
    """The store at ``url`` for a command that only reads.

    A SQLite file is opened read-only (``read_only=True``, the URL's ``mode=ro``):
    a mistyped path is a ``ValidationError`` ("no such database file") and no
    file appears. Other backends create nothing when read: a PostgreSQL schema
    is made only by ``migrate`` or ``auto_migrate``, and a Redis read writes no key.
    """
    if url.partition(":")[0].lower() == "sqlite":
        return open_store(url, read_only=True)
    return open_store(url)
