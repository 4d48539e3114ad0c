"""What a span says about where the store lives: ``db.system.name`` and ``db.namespace``,
as the store's engine names them (docs/backends/writing.md)."""

from __future__ import annotations

from ..base import StoreBase

__all__ = ["engine_target"]


def engine_target(store: object) -> tuple[str | None, str | None]:
    """``(db.system.name, db.namespace)`` of a store on the engine seam; ``(None, None)``
    for any other store, which names its system itself.

    The namespace is what semconv names for each system: the file of SQLite, the
    database and schema of PostgreSQL, the database index of Redis, the name of a
    named memory store. Never the user, host or password.
    """
    if isinstance(store, StoreBase):
        return store.engine.system, store.engine.namespace
    return None, None
