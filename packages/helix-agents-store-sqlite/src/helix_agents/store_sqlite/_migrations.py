"""Versioned schema migrations: numbered ``.sql`` files shipped in the package.

Each file ``NNNN_name.sql`` is one version. Opening a database applies the
missing versions in one ``BEGIN IMMEDIATE`` transaction and records each
version's SHA-256 in ``__agents_migrations``; the write lock makes many
processes opening a new file at once safe (the first creates the schema, the
others find it recorded). A database that records a version this package does
not ship, or a checksum that differs from the shipped file, is refused.
"""

from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

from helix_agents.core.errors import MigrationError

__all__ = ["Migration", "apply_migrations", "pending_migrations", "shipped_migrations"]

logger = logging.getLogger("helix_agents.store_sqlite")

_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
_CREATE_TABLE = """
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
    found = []
    for entry in folder.iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), entry.name, entry.read_text("utf-8")))
    found.sort(key=lambda m: m.version)
    return found


def apply_migrations(
    db: sqlite3.Connection,
    path: str,
    migrations: list[Migration],
    on_applied: Callable[[str], object] | None = None,
) -> int:
    """Bring the schema to the newest version in one transaction; return that version.

    ``on_applied`` is called with each migration's name once its statements ran
    (inside the transaction: a later failure still rolls every one back).

    An up-to-date file is checked on a read snapshot, so opening a store never
    waits for a writer; only missing versions take the write lock. Raises
    :class:`~helix_agents.core.errors.MigrationError` when the database was written
    by a newer package or a shipped migration changed after it ran.
    """
    newest = max((m.version for m in migrations), default=0)
    db.execute("BEGIN")
    try:
        missing = _check(db, path, migrations)
    finally:
        db.rollback()
    if not missing:
        return newest
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(_CREATE_TABLE)
        # Another process may have migrated between the check and the lock.
        for migration in _check(db, path, migrations):
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
    return newest


def _check(db: sqlite3.Connection, path: str, migrations: list[Migration]) -> list[Migration]:
    """The shipped migrations the file lacks, after refusing unknown or changed ones."""
    has_table = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__agents_migrations'"
    ).fetchone()
    recorded: dict[int, str] = {}
    if has_table:
        recorded = dict(db.execute("SELECT version, checksum FROM __agents_migrations").fetchall())
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


def pending_migrations(
    db: sqlite3.Connection, path: str, migrations: list[Migration]
) -> list[Migration]:
    """The migrations the file lacks, read on a snapshot without writing anything.

    Raises :class:`~helix_agents.core.errors.MigrationError` like :func:`apply_migrations`.
    """
    db.execute("BEGIN")
    try:
        return _check(db, path, migrations)
    finally:
        db.rollback()
