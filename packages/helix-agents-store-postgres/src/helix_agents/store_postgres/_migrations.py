"""Migrations: numbered SQL files, checksummed, applied under one lock.

Each file ``migrations/NNNN_name.sql`` (tables and functions) is applied once per
schema, in order, with ``search_path`` set to the schema, and recorded with its
SHA-256 in ``__agents_migrations``. A file whose text changed after it was
applied, or an applied version this package does not know, is a
:class:`MigrationError`. Everything pending is applied in one transaction holding
``pg_advisory_xact_lock`` on the schema's name, so that processes starting
together apply each file exactly once.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import psycopg
from psycopg import AsyncConnection, AsyncCursor, sql
from psycopg.rows import TupleRow, tuple_row

from ._errors import MigrationError, logger, wrap_driver_error

__all__ = ["Migration", "check_applied", "driver_errors", "migrate", "migrations", "read_applied"]

_FILE = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
_LOCK_PREFIX = "helix_agents.store_postgres:"

# The table that books what migrate() applied; the statement that records one.
_BOOK = (
    "CREATE TABLE IF NOT EXISTS __agents_migrations ("
    " version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,"
    " applied_at timestamptz NOT NULL DEFAULT now())"
)
_RECORD = "INSERT INTO __agents_migrations (version, name, checksum) VALUES (%s, %s, %s)"


@contextmanager
def driver_errors(conn: AsyncConnection[Any], what: str, *, sent_write: bool) -> Iterator[None]:
    """Raise a driver error inside as the store's error for ``what`` (never a psycopg one)."""
    try:
        yield
    except psycopg.Error as exc:
        raise wrap_driver_error(
            exc, what=what, session_id=None, sent_write=sent_write, broken=conn.broken
        ) from exc


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered SQL file and its checksum."""

    version: int
    name: str
    sql: str
    checksum: str


@cache
def migrations() -> tuple[Migration, ...]:
    """The migrations this package ships, by version (1, 2, … without gaps)."""
    found = []
    for entry in files("helix_agents.store_postgres").joinpath("migrations").iterdir():
        match = _FILE.match(entry.name)
        if match:
            # Hash with LF line endings, so a checkout that rewrote them changes nothing.
            raw = entry.read_bytes().replace(b"\r\n", b"\n")
            checksum = hashlib.sha256(raw).hexdigest()
            found.append(Migration(int(match.group(1)), match.group(0), raw.decode(), checksum))
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migration files are not numbered 1..n: {[m.name for m in found]}")
    return tuple(found)


def check_applied(schema: str, applied: list[tuple[int, str, str]]) -> list[Migration]:
    """The migrations still to apply, after checking the applied ones against the files."""
    known = {m.version: m for m in migrations()}
    for version, name, checksum in applied:
        mine = known.get(version)
        if mine is None:
            raise MigrationError(
                f"schema {schema!r} has migration {version} ({name}), which this "
                f"helix-agents-store-postgres does not know: a newer version migrated it; "
                f"upgrade the package"
            )
        if checksum != mine.checksum:
            raise MigrationError(
                f"migration {mine.name} changed after it was applied to schema {schema!r} "
                f"(applied sha256 {checksum[:12]}…, file {mine.checksum[:12]}…): "
                f"applied migrations must never change; restore the file"
            )
    done = {version for version, _, _ in applied}
    pending = [m for m in known.values() if m.version not in done]
    if pending and done and pending[0].version < max(done):
        raise MigrationError(
            f"schema {schema!r} lacks migration {pending[0].name} below applied version "
            f"{max(done)}: the migrations table was edited by hand"
        )
    return pending


async def read_applied(cur: AsyncCursor[TupleRow], schema: str) -> list[tuple[int, str, str]]:
    """``(version, name, checksum)`` of each migration applied to ``schema``, or ``[]``."""
    table = sql.Identifier(schema, "__agents_migrations")
    await cur.execute(
        "SELECT to_regclass(%s) IS NOT NULL", [table.as_string(cur.connection)], prepare=False
    )
    found = await cur.fetchone()
    if not (found and found[0]):
        return []
    query = sql.SQL("SELECT version, name, checksum FROM {} ORDER BY version").format(table)
    await cur.execute(query, prepare=False)
    return [(int(v), str(n), str(c)) for v, n, c in await cur.fetchall()]


async def migrate(
    conn: AsyncConnection[Any],
    schema: str = "public",
    *,
    on_applied: Callable[[str], object] | None = None,
) -> list[int]:
    """Bring ``schema`` to the latest version; return the versions applied now.

    ``on_applied`` is called with each migration's name as it runs (for a progress bar).

    Works on an autocommit connection and on one that is not: the migrations
    run in their own transaction, committed here. On a connection already
    inside a transaction they run in a savepoint, and committing is the
    caller's business.
    """
    with driver_errors(conn, f"migrating schema {schema!r}", sent_write=True):
        async with conn.transaction(), conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                [_LOCK_PREFIX + schema],
                prepare=False,
            )
            pending = check_applied(schema, await read_applied(cur, schema))
            if not pending:
                return []
            ident = sql.Identifier(schema)
            await cur.execute("SELECT current_setting('search_path')", prepare=False)
            saved = await cur.fetchone()
            await cur.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(ident), prepare=False
            )
            await cur.execute(
                "SELECT set_config('search_path', %s, true)", [ident.as_string(conn)], prepare=False
            )
            await cur.execute(_BOOK, prepare=False)
            for m in pending:
                await cur.execute(m.sql.encode(), prepare=False)
                await cur.execute(_RECORD, [m.version, m.name, m.checksum], prepare=False)
                if on_applied is not None:
                    on_applied(m.name)
            logger.info("schema %r: migrations applied: %s", schema, [m.name for m in pending])
            await cur.execute(
                "SELECT set_config('search_path', %s, true)",
                [saved[0] if saved else ""],
                prepare=False,
            )
            return [m.version for m in pending]
