"""``SQLiteStateStore``: the session store protocol on one SQLite file, through aiosqlite."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Concatenate, ParamSpec, Self, TypeVar, cast

from helix_agents.core import (
    Checkpoint,
    CommitResult,
    JsonObject,
    LateAnswer,
    Message,
    MessageCommit,
    MessagePage,
    PendingApproval,
    RecordResult,
    SessionInfo,
    SessionNotFoundError,
    SessionsPage,
    StoredContextItem,
    StoreUnavailableError,
    ValidationError,
)
from helix_agents.core.backend import (
    ClosesOnExit,
    SessionHandles,
    check_checkpoint_ids,
    check_id,
    check_new_session,
    check_scope,
    checkpoint_range,
    decode_sessions_cursor,
)
from helix_agents.core.clock import check_clock, utcnow
from helix_agents.core.limits import check_listing_first, check_max_messages
from helix_agents.core.models import ApprovalResolution, PageOrder, RunStatus, Scope

from . import _checkpoint_pages, _commit, _edits, _reads, _records, _scoped, _writes
from ._config import SQLiteConfig, Synchronous
from ._context_store import ContextMethods
from ._db import Database, unavailable
from ._inline import MISSED, InlineReader

__all__ = ["SQLiteStateStore"]

_T = TypeVar("_T")
_P = ParamSpec("_P")


class SQLiteStateStore(ContextMethods, SessionHandles, ClosesOnExit):
    """Session state in one SQLite file, shared by every store and process that opens it.

    ``async with SQLiteStateStore("agent.db") as store`` opens two connections:
    a writer, whose every write is one ``BEGIN IMMEDIATE`` transaction run in
    one hop to its thread, and a reader, whose reads see a WAL snapshot and
    never wait for writers. ``max_messages`` keeps the newest N rows of each
    session; ``busy_timeout`` (seconds) bounds the wait for another writer;
    ``synchronous`` is ``NORMAL`` (survives a process crash) or ``FULL``
    (also a power loss).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_messages: int | None = None,
        busy_timeout: float = 5.0,
        synchronous: Synchronous = "NORMAL",
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        check_max_messages(max_messages)
        try:
            file = os.fspath(path)
        except TypeError:
            raise ValidationError(
                f"SQLite path must be a str or path, got {type(path).__name__}"
            ) from None
        self.config = SQLiteConfig(file, busy_timeout, synchronous)
        self.max_messages = max_messages
        self._clock = check_clock(clock)
        self._writer: Database | None = None
        self._reader: Database | None = None
        self._inline: InlineReader | None = None
        self._closed = False

    @property
    def path(self) -> str:
        """The database file."""
        return self.config.path

    async def __aenter__(self) -> Self:
        if self._closed:
            raise StoreUnavailableError(f"the SQLite store on {self.path!r} was closed")
        self._writer = await Database.connect(self.config, writer=True)
        try:
            self._reader = await Database.connect(self.config, writer=False)
            self._inline = InlineReader(self.config.path)
        except sqlite3.Error as exc:
            await self.close()
            raise unavailable(f"open of {self.path!r}", exc) from exc
        except BaseException:
            await self.close()
            raise
        return self

    async def close(self) -> None:
        """Close the store's connections; later calls raise ``StoreUnavailableError``."""
        self._closed = True
        if self._inline is not None:
            self._inline.close()
        opened = [db for db in (self._reader, self._writer) if db is not None]
        # Shielded: a cancelled close still stops both connection threads.
        await asyncio.shield(asyncio.gather(*(db.close() for db in opened)))

    def _check_open(self, sid: object = None) -> None:
        """Refuse a closed or never opened store before any argument is looked at
        (INP-5, INP-7)."""
        if self._closed or self._writer is None:
            session_id = sid if isinstance(sid, str) else None
            where = "" if session_id is None else f"session {session_id!r}: "
            why = "was closed" if self._closed else "is not open: use 'async with'"
            raise StoreUnavailableError(
                f"{where}the SQLite store on {self.path!r} {why}", session_id=session_id
            )

    def _db(self, db: Database | None, sid: str | None) -> Database:
        self._check_open(sid)
        if db is None:
            # Between the writer's connection and the reader's, while the store opens.
            raise StoreUnavailableError(
                f"the SQLite store on {self.path!r} is still opening", session_id=sid
            )
        if sid is not None:
            check_id(sid, "session_id")
        return db

    # The three hops share a signature on purpose: ParamSpec checks each call's
    # arguments against ``op``, which one generic hop taking the mode could not name.
    async def _write(
        self,
        sid: str | None,
        op: Callable[Concatenate[sqlite3.Connection, _P], _T],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _T:
        return await self._db(self._writer, sid).write(lambda db: op(db, *args, **kwargs), sid)

    async def _read(
        self,
        sid: str | None,
        op: Callable[Concatenate[sqlite3.Connection, _P], _T],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _T:
        return await self._db(self._reader, sid).read(lambda db: op(db, *args, **kwargs), sid)

    async def _query(
        self,
        sid: str | None,
        op: Callable[Concatenate[sqlite3.Connection, _P], _T],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _T:
        reader = self._db(self._reader, sid)

        def work(db: sqlite3.Connection) -> _T:
            return op(db, *args, **kwargs)

        if self._inline is not None:
            # First on the event loop's thread, within a budget (``_inline``).
            done = self._inline.run(work)
            if done is not MISSED:
                return cast(_T, done)
        return await reader.query(work, sid)

    # Sessions

    async def create_session(
        self,
        session_id: str | None = None,
        *,
        user_id: str | None = None,
        metadata: JsonObject | None = None,
    ) -> SessionInfo:
        """Create a session; mint a unique id when none is given."""
        self._check_open()
        sid, meta = check_new_session(session_id, user_id, metadata)
        meta_json = json.dumps(meta, ensure_ascii=False)
        return await self._write(sid, _writes.create, sid, user_id, meta_json, self._clock)

    async def get_session(self, session_id: str) -> SessionInfo | None:
        """The session, or ``None``."""
        try:
            row = await self._query(session_id, _reads.session, session_id)
        except SessionNotFoundError:
            return None
        return row.info()

    async def delete_session(self, session_id: str) -> bool:
        """Delete the session and everything it holds; ``True`` if it existed."""
        return await self._write(session_id, _writes.delete, session_id)

    async def clear_session(self, session_id: str) -> None:
        """Drop rows and queues; keep the session, its user and metadata; cancel a live run."""
        await self._write(session_id, _writes.clear, session_id, self._clock)

    async def clone_session(
        self, source_id: str, target_id: str | None = None, *, up_to: int | None = None
    ) -> SessionInfo:
        """Copy rows ``[0, up_to)`` and the checkpoints in range into a new session."""
        return await self._write(source_id, _writes.clone, source_id, target_id, up_to, self._clock)

    async def list_sessions(
        self, user_id: str, *, first: int = 20, cursor: str | None = None
    ) -> SessionsPage:
        """A user's sessions, most recent activity first, ties by id."""
        self._db(self._reader, None)
        check_id(user_id, "user_id")
        check_listing_first(first)
        after = None if cursor is None else decode_sessions_cursor(user_id, cursor)
        return await self._query(None, _reads.sessions_page, user_id, first, after)

    # Rows

    async def append_messages(self, session_id: str, commit: MessageCommit) -> CommitResult:
        """Append rows with the checks and deliveries of the commit, in one transaction."""
        return await self._write(
            session_id, _commit.commit, session_id, commit, self._clock, self.max_messages
        )

    async def get_scoped_state(self, scope: Scope, owner: str) -> JsonObject:
        """The ``(scope, owner)`` map (``{}`` if never written); a ``session`` owner must exist."""
        self._check_open()
        check_scope(None, scope, owner)
        sid = owner if scope == "session" else None
        return await self._read(sid, _scoped.read, scope, owner)

    async def get_messages(self, session_id: str, *, limit: int | None = None) -> list[Message]:
        """Rows oldest first; ``limit`` keeps the last N."""
        return await self._query(session_id, _reads.messages, session_id, limit)

    async def get_message_count(self, session_id: str) -> int:
        """All rows, context rows included."""
        return (await self._query(session_id, _reads.session, session_id)).message_count

    async def get_ui_message_count(self, session_id: str) -> int:
        """Rows that are not context rows."""
        return (await self._query(session_id, _reads.session, session_id)).ui_count

    async def page_messages(
        self,
        session_id: str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        order: PageOrder = "asc",
    ) -> MessagePage:
        """A page of rows in ``order``; ``next_cursor`` is ``None`` at the end."""
        return await self._read(session_id, _reads.page, session_id, limit, cursor, order)

    async def truncate_messages(
        self, session_id: str, keep: int, *, fence_run_id: str | None = None
    ) -> None:
        """Drop rows at index >= ``keep``, re-opening the items they delivered."""
        await self._write(session_id, _writes.truncate, session_id, keep, fence_run_id, self._clock)

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        """Remove the newest ``count`` rows in one transaction and return them, oldest first."""
        return await self._write(
            session_id, _edits.pop, session_id, count, fence_run_id, self._clock
        )

    async def replace_messages(
        self,
        session_id: str,
        keep: int,
        messages: Sequence[Message],
        *,
        expect_message_count: int,
        fence_run_id: str | None = None,
    ) -> CommitResult:
        """If the log still holds ``expect_message_count`` rows, cut it to ``keep`` rows and
        append ``messages``, in one transaction."""
        return await self._write(
            session_id,
            _edits.replace,
            session_id,
            keep,
            messages,
            expect_message_count,
            fence_run_id,
            self._clock,
            self.max_messages,
        )

    async def is_truncated(self, session_id: str) -> bool:
        """Whether retention has dropped old rows."""
        return (await self._query(session_id, _reads.session, session_id)).first_index > 0

    # Runs

    async def finish_run(self, session_id: str, run_id: str, status: RunStatus) -> None:
        """End the current live run with ``status``."""
        await self._write(session_id, _writes.finish_run, session_id, run_id, status, self._clock)

    # Queues

    async def record_context_item(
        self, session_id: str, record: StoredContextItem, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Queue a context item, once per key."""
        return await self._write(
            session_id, _records.record_item, session_id, record, fence_run_id, self._clock
        )

    async def list_undelivered_context_items(self, session_id: str) -> list[StoredContextItem]:
        """Queued items, by ``at`` then key."""
        return await self._read(session_id, _reads.queued_items, session_id)

    async def record_late_answer(
        self, session_id: str, answer: LateAnswer, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Queue a late answer, once per call id."""
        return await self._write(
            session_id, _records.record_late, session_id, answer, fence_run_id, self._clock
        )

    async def list_undelivered_late_answers(self, session_id: str) -> list[LateAnswer]:
        """Queued late answers, by ``at`` then call id."""
        return await self._read(session_id, _reads.late_answers, session_id)

    # Approvals

    async def add_pending_approvals(
        self,
        session_id: str,
        approvals: Sequence[PendingApproval],
        *,
        fence_run_id: str | None = None,
    ) -> None:
        """Add approvals, once per ``approval_id``."""
        await self._write(
            session_id,
            _records.add_approvals,
            session_id,
            approvals,
            fence_run_id,
            self._clock,
        )

    async def list_pending_approvals(self, session_id: str) -> list[PendingApproval]:
        """Unresolved approvals by ``requested_at``, then id."""
        return await self._read(session_id, _reads.pending_approvals, session_id)

    async def resolve_approval(self, session_id: str, approval_id: str) -> ApprovalResolution:
        """``"resolved"`` for exactly one caller, ``"already-resolved"`` for the rest."""
        return await self._write(session_id, _records.resolve, session_id, approval_id, self._clock)

    # Checkpoints

    async def save_checkpoint(
        self, session_id: str, checkpoint: Checkpoint, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Save a checkpoint, once per id."""
        return await self._write(
            session_id,
            _records.save_checkpoint,
            session_id,
            checkpoint,
            fence_run_id,
            self._clock,
        )

    async def get_checkpoint(self, session_id: str, checkpoint_id: str) -> Checkpoint | None:
        """The checkpoint, or ``None``."""
        return await self._read(session_id, _reads.checkpoint, session_id, checkpoint_id)

    async def latest_checkpoint(self, session_id: str) -> Checkpoint | None:
        """The checkpoint with the highest ``message_count``, then the newest."""
        found = await self._read(session_id, _reads.checkpoints, session_id, True)
        return found[0] if found else None

    async def list_checkpoints(self, session_id: str) -> list[Checkpoint]:
        """Checkpoints by ``message_count``, then ``created_at``, then id."""
        return await self._read(session_id, _reads.checkpoints, session_id)

    async def page_checkpoints(
        self,
        session_id: str,
        *,
        prefix: str = "",
        before: str | None = None,
        limit: int = 50,
    ) -> list[Checkpoint]:
        """Up to ``limit`` checkpoints under ``prefix`` and below ``before``, greatest id first."""
        where = await self._checked(
            session_id, lambda: checkpoint_range(session_id, prefix, before, limit)
        )
        return await self._read(session_id, _checkpoint_pages.page, session_id, where)

    async def delete_checkpoints(self, session_id: str, checkpoint_ids: Sequence[str]) -> int:
        """Delete the named checkpoints (unknown ids are skipped); how many were deleted."""
        ids = await self._checked(
            session_id, lambda: check_checkpoint_ids(session_id, checkpoint_ids)
        )
        return await self._write(session_id, _checkpoint_pages.delete, session_id, ids, self._clock)
