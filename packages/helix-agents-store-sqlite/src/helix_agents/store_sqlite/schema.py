"""The schema of a SQLite file, for tools: the file a URL names, its pending migrations,
and applying them without opening a store (``helix-store migrate`` uses these)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from helix_agents.core import StoreUnavailableError

from ._config import namespaced_path, parse_url
from ._migrations import apply_migrations, shipped_migrations
from ._migrations import pending_migrations as _pending

__all__ = ["database_file", "migrate", "migration_names", "pending_migrations"]


def database_file(url: str, namespace: str | None = None) -> str:
    """The file ``open_store(url, namespace=namespace)`` keeps its data in.

    A malformed ``sqlite://`` URL or namespace is a
    :class:`~helix_agents.core.ValidationError`.
    """
    return namespaced_path(parse_url(url)[0], namespace)


def migration_names() -> list[str]:
    """The migrations this package ships (``0001_initial.sql``, …), by version."""
    return [m.name for m in shipped_migrations()]


def pending_migrations(path: str | os.PathLike[str]) -> list[str]:
    """The shipped migrations the file lacks, read without writing anything.

    Every one for a file that does not exist (it is not created). Raises
    :class:`~helix_agents.core.errors.MigrationError` for a file written by a newer
    package or whose applied migration changed, as opening a store would.
    """
    file = os.fspath(path)
    if not Path(file).exists():
        return migration_names()
    with _connected(file) as db:
        return [m.name for m in _pending(db, file, shipped_migrations())]


def migrate(
    path: str | os.PathLike[str], *, on_applied: Callable[[str], object] | None = None
) -> list[str]:
    """Apply the pending migrations in one transaction (creating the file if need be);
    the names applied now, ``[]`` when the file was up to date.

    ``on_applied(name)`` is called as each migration runs (for a progress bar).
    """
    file = os.fspath(path)
    shipped = shipped_migrations()
    with _connected(file) as db:
        pending = _pending(db, file, shipped) if Path(file).exists() else shipped
        if pending:
            apply_migrations(db, file, shipped, on_applied)
        return [m.name for m in pending]


@contextmanager
def _connected(path: str) -> Iterator[sqlite3.Connection]:
    """A plain sqlite3 connection in autocommit mode; driver errors as StoreUnavailableError."""
    try:
        db = sqlite3.connect(path, isolation_level=None)
    except sqlite3.Error as exc:
        raise StoreUnavailableError(f"cannot open SQLite file {path!r}: {exc}") from None
    try:
        yield db
    except sqlite3.Error as exc:
        raise StoreUnavailableError(f"cannot migrate SQLite file {path!r}: {exc}") from None
    finally:
        db.close()
