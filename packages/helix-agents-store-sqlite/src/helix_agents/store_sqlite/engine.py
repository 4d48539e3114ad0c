"""``SQLiteEngine``: the engine seam on one SQLite file (docs/backends/sqlite.md)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Literal, TypeVar, cast

from helix_agents.core import JsonObject, StoreUnavailableError, ValidationError
from helix_agents.core.backend import (
    Changes,
    Engine,
    NewSession,
    Refused,
    SessionDump,
    Snapshot,
    Want,
)
from helix_agents.core.models import ListedSession, SessionSummary

from . import _dumps, _reads, _writes
from ._config import SQLiteConfig
from ._connection import Connection, Work, unavailable
from ._inline import MISSED, InlineReader
from .schema import migrate, pending_migrations

__all__ = ["SQLiteEngine"]

_T = TypeVar("_T")


class SQLiteEngine(Engine):
    """Sessions in one SQLite file in WAL mode, shared by every store and process on it.

    A write is one hop to the writer's thread, which runs the writes queued
    together in one ``BEGIN IMMEDIATE`` transaction, each in a savepoint of its own
    (group commit). A read runs on one snapshot: first on a read-only connection of the
    event loop's thread, within a time budget (``_inline``), else on the reader's
    thread.
    """

    system = "sqlite"
    needs_open = True

    def __init__(self, config: SQLiteConfig) -> None:
        self.config = config
        self.namespace = config.path
        self._writer: Connection | None = None
        self._reader: Connection | None = None
        self._inline: InlineReader | None = None

    async def open(self) -> None:
        """Open the writer (WAL, migrations), the reader and the inline connection.

        A read-only store opens no writer, and refuses a file that does not exist
        or lacks a migration.
        """
        try:
            if not self.config.read_only:
                self._writer = Connection(self.config, writer=True)
                await self._writer.open()
            self._reader = Connection(self.config, writer=False)
            await self._reader.open()
            self._inline = InlineReader(*self.config.database())
        except BaseException as exc:
            await self.close()
            if isinstance(exc, sqlite3.Error):
                raise unavailable(f"open of {self.config.path!r}", exc) from exc
            raise

    async def close(self) -> None:
        """Close the connections (shielded: a cancelled close still stops the threads)."""
        if self._inline is not None:
            self._inline.close()
        opened = [c for c in (self._reader, self._writer) if c is not None]
        self._inline = self._reader = self._writer = None
        await asyncio.shield(asyncio.gather(*(c.close() for c in opened)))

    async def migrate(self) -> None:
        """Apply the pending migrations to the file (opening does it too)."""
        self._refuse_if_read_only()
        await asyncio.to_thread(migrate, self.config.path)

    async def pending_migrations(self) -> list[str]:
        """The migrations the file lacks, read without creating or writing it."""
        return await asyncio.to_thread(pending_migrations, self.config.path)

    async def _read(self, work: Work[_T]) -> _T:
        if self._inline is not None:
            done = self._inline.run(work)
            if done is not MISSED:
                return cast(_T, done)
        return await self._on(self._reader).run(work)

    async def _write(self, work: Work[_T], *, alone: bool = False) -> _T:
        self._refuse_if_read_only()
        return await self._on(self._writer).run(work, alone=alone)

    def _refuse_if_read_only(self) -> None:
        if self.config.read_only:
            raise ValidationError(
                f"the SQLite store on {self.config.path!r} is read-only (mode=ro): "
                f"writes are refused"
            )

    def _on(self, connection: Connection | None) -> Connection:
        if connection is None:
            raise StoreUnavailableError(f"the SQLite store on {self.config.path!r} is not open")
        return connection

    async def snapshot(self, session_id: str, want: Want) -> Snapshot | None:
        """The session's head and what ``want`` names, on one read snapshot."""
        return await self._read(lambda db: _reads.snapshot(db, session_id, want))

    async def apply(
        self, session_id: str, version: int, changes: Changes, want: Want
    ) -> Refused | Snapshot:
        """The guarded write: one hop to the writer's thread, atomic in its savepoint; a
        redaction runs in a transaction of its own (it turns ``secure_delete`` on), then
        checkpoints the WAL, so the text it replaced leaves the files (RED-6)."""
        done = await self._write(
            lambda db: _writes.apply(db, session_id, version, changes, want),
            alone=changes.redact is not None,
        )
        if changes.redact is not None and not isinstance(done, Refused):
            await self._on(self._writer).checkpoint()
        return done

    async def create(self, new: NewSession) -> Literal["created", "exists"] | Refused:
        """Insert the session (or the clone) in one transaction."""
        return await self._write(lambda db: _writes.create(db, new))

    async def restore(
        self, new: NewSession, plans: Sequence[Changes]
    ) -> Literal["created", "exists"]:
        """The session and every plan in one transaction (docs/export.md, EXP-11)."""
        return await self._write(lambda db: _writes.restore(db, new, plans))

    async def delete(self, session_id: str) -> bool:
        """Delete the session and everything it holds, in one transaction."""
        return await self._write(lambda db: _writes.delete(db, session_id))

    async def delete_at(self, session_id: str, version: int) -> bool:
        """Delete the session if it is at ``version``, in one transaction."""
        return await self._write(lambda db: _writes.delete(db, session_id, version))

    async def erase_user(self, user_id: str, session_ids: Sequence[str]) -> None:
        """One transaction that zeroes what it frees, then a WAL checkpoint, so the
        user's data is in neither file (docs/lifecycle.md, ERA-5)."""
        await self._write(lambda db: _writes.erase_user(db, user_id, session_ids), alone=True)
        await self._on(self._writer).checkpoint()

    async def list_sessions(
        self, user_id: str, after: tuple[datetime, str] | None, limit: int
    ) -> Sequence[SessionSummary]:
        """A page of the user's sessions: one statement on the listing index."""
        return await self._read(lambda db: _reads.listing(db, user_id, after, limit))

    async def list_all(self, after_id: str | None, limit: int) -> Sequence[ListedSession]:
        """A page of every session by id: one range of the primary key."""
        return await self._read(lambda db: _reads.all_page(db, after_id, limit))

    async def scoped_state(self, scope: str, owner: str) -> JsonObject:
        """The app or user map."""
        return await self._read(lambda db: _reads.scoped(db, scope, owner))

    async def dump(self, session_id: str) -> SessionDump | None:
        """Every record of the session, on one read snapshot (docs/export.md)."""
        return await self._read(lambda db: _dumps.dump(db, session_id))

    async def scoped_maps(self) -> Sequence[tuple[str, str, JsonObject]]:
        """Every app and user map that holds a key (docs/export.md)."""
        return await self._read(_dumps.scoped_maps)
