"""The schema: numbered ``migrations/NNNN_name.sql`` files shipped in the package, and
helpers for tools that look at a file without opening a store (``helix-store migrate``).

Opening a store applies the missing migrations in one ``BEGIN IMMEDIATE``
transaction and records each one's SHA-256 in ``__agents_migrations``; the write
lock makes many processes opening a new file at once safe (the first creates
the schema, the others find it recorded). A file that records a version this
package does not ship, or a checksum that differs from the shipped file, is
refused with :class:`~helix_agents.core.errors.MigrationError`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from helix_agents.core import StoreUnavailableError
from helix_agents.core.errors import MigrationError

from ._config import namespaced_path, parse_url

__all__ = ["database_file", "migrate", "migration_names", "pending_migrations"]

logger = logging.getLogger("helix_agents.store_sqlite")

_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
_TABLE = """
CREATE TABLE IF NOT EXISTS __agents_migrations (
    version    INTEGER NOT NULL PRIMARY KEY,
    name       TEXT    NOT NULL,
    checksum   TEXT    NOT NULL,
    applied_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
)
"""


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered schema step."""

    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        """SHA-256 of the file's text, recorded when the step is applied."""
        return hashlib.sha256(self.sql.encode()).hexdigest()

    def statements(self) -> list[str]:
        """The file split into single statements (``execute`` runs one at a time)."""
        found: list[str] = []
        buffer = ""
        for line in self.sql.splitlines(keepends=True):
            buffer += line
            if sqlite3.complete_statement(buffer):
                found.append(buffer.strip())
                buffer = ""
        return found


def shipped_migrations() -> list[Migration]:
    """The migrations in this package, by version."""
    folder = resources.files("helix_agents.store_sqlite").joinpath("migrations")
    found = [
        Migration(int(match.group(1)), entry.name, entry.read_text("utf-8"))
        for entry in folder.iterdir()
        if (match := _NAME.match(entry.name))
    ]
    return sorted(found, key=lambda m: m.version)


def apply_migrations(
    db: sqlite3.Connection,
    path: str,
    migrations: list[Migration],
    on_applied: Callable[[str], object] | None = None,
) -> list[Migration]:
    """Apply the missing migrations in one transaction; those applied.

    An up-to-date file is checked on a read snapshot, so opening a store never
    waits for a writer; only missing versions take the write lock.
    ``on_applied(name)`` is called inside the transaction as each one runs.
    """
    if not _pending(db, path, migrations):
        return []
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(_TABLE)
        # Another process may have migrated between the check and the lock.
        missing = _check(db, path, migrations)
        for migration in missing:
            for statement in migration.statements():
                db.execute(statement)
            db.execute(
                "INSERT INTO __agents_migrations (version, name, checksum) VALUES (?, ?, ?)",
                (migration.version, migration.name, migration.checksum),
            )
            logger.info("applied migration %s to %s", migration.name, path)
            if on_applied is not None:
                on_applied(migration.name)
        db.execute("COMMIT")
    except BaseException:
        db.rollback()
        raise
    return missing


def _pending(db: sqlite3.Connection, path: str, migrations: list[Migration]) -> list[Migration]:
    db.execute("BEGIN")
    try:
        return _check(db, path, migrations)
    finally:
        db.rollback()


def _check(db: sqlite3.Connection, path: str, migrations: list[Migration]) -> list[Migration]:
    """The shipped migrations the file lacks, after refusing unknown or changed ones."""
    recorded: dict[int, str] = {}
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = '__agents_migrations'").fetchone():
        recorded = dict(db.execute("SELECT version, checksum FROM __agents_migrations"))
    known = {m.version: m for m in migrations}
    newer = sorted(set(recorded) - set(known))
    if newer:
        raise MigrationError(
            f"SQLite database {path!r} has schema version {newer[-1]}, newer than this "
            f"helix-agents-store-sqlite knows (up to {max(known, default=0)}): "
            f"upgrade the package"
        )
    for version, checksum in recorded.items():
        if checksum != known[version].checksum:
            raise MigrationError(
                f"SQLite database {path!r}: migration {known[version].name} was changed "
                f"after it was applied (recorded checksum {checksum[:12]}..., shipped "
                f"{known[version].checksum[:12]}...); refusing to open"
            )
    return [m for m in migrations if m.version not in recorded]


def lacking_migrations(db: sqlite3.Connection, path: str) -> list[str]:
    """The shipped migrations the open file ``db`` lacks, read in a transaction of its own."""
    return [m.name for m in _pending(db, path, shipped_migrations())]


def database_file(url: str, namespace: str | None = None) -> str:
    """The file ``open_store(url, namespace=namespace)`` keeps its data in (a malformed
    URL or namespace is a :class:`~helix_agents.core.ValidationError`)."""
    return namespaced_path(parse_url(url)[0], namespace)


def migration_names() -> list[str]:
    """The migrations this package ships (``0001_initial.sql``, …), by version."""
    return [m.name for m in shipped_migrations()]


def pending_migrations(path: str | os.PathLike[str]) -> list[str]:
    """The shipped migrations the file lacks, read without writing anything (every one
    for a file that does not exist, which is not created); refuses a file from a newer
    package or with a changed migration, as opening a store would."""
    file = os.fspath(path)
    if not Path(file).exists():
        return migration_names()
    with _connected(file) as db:
        return lacking_migrations(db, file)


def migrate(
    path: str | os.PathLike[str], *, on_applied: Callable[[str], object] | None = None
) -> list[str]:
    """Apply the pending migrations in one transaction (creating the file if need be);
    the names applied now, ``[]`` when the file was up to date. ``on_applied(name)`` is
    called as each migration runs (for a progress bar)."""
    file = os.fspath(path)
    with _connected(file) as db:
        return [m.name for m in apply_migrations(db, file, shipped_migrations(), on_applied)]


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
