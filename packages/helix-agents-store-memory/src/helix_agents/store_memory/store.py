"""``MemoryStateStore``: the whole protocol in process, the reference for every backend."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Self, TypeVar

import pydantic

from helix_agents.core import (
    ApprovalResolution,
    Checkpoint,
    CommitResult,
    JsonObject,
    LateAnswer,
    Message,
    MessageCommit,
    MessagePage,
    PageOrder,
    PendingApproval,
    RecordResult,
    RunStatus,
    Scope,
    SessionExistsError,
    SessionInfo,
    SessionNotFoundError,
    SessionsPage,
    SessionSummary,
    StoredContextItem,
    StoreUnavailableError,
    ValidationError,
    parse_message,
)
from helix_agents.core.backend import (
    ClosesOnExit,
    SessionHandles,
    add_approvals_once,
    approvals_in_order,
    assert_fence,
    check_checkpoint_count,
    check_checkpoint_ids,
    check_commit,
    check_finish_status,
    check_id,
    check_keep,
    check_limit,
    check_new_session,
    check_pop_count,
    check_scope,
    checkpoint_range,
    checkpoints_in_order,
    coerce,
    coerce_all,
    decode_sessions_cursor,
    encode_sessions_cursor,
    new_session_id,
    next_activity,
    page_rows,
    plan_replace,
    pop_keep,
    record_once,
    redact_url,
    resolve_once,
    undelivered_in_order,
)
from helix_agents.core.clock import check_clock, utcnow
from helix_agents.core.errors import session_not_found
from helix_agents.core.limits import (
    check_listing_first,
    check_max_messages,
    check_tail_limit,
)

from . import _checkpoint_pages
from ._context import ContextMethods
from ._ops import apply_plan, commit_state, cut_rows, retain
from ._state import ContextData, MemoryData, SessionData

__all__ = ["MemoryStateStore"]

Queued = TypeVar("Queued", StoredContextItem, LateAnswer)

_metadata = pydantic.TypeAdapter(dict[str, pydantic.JsonValue])
_SHARED: dict[str, MemoryData] = {}


class MemoryStateStore(ContextMethods, SessionHandles, ClosesOnExit):
    """Session state in this process; lost when it exits.

    Stores built on one :class:`MemoryData` share their sessions, like two
    connections to one database. Each session has its own lock, held only
    for the instant of a read or write, so sessions never wait on each other.
    """

    def __init__(
        self,
        data: MemoryData | None = None,
        *,
        max_messages: int | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        if max_messages is not None:
            check_max_messages(max_messages)
        if data is not None and not isinstance(data, MemoryData):
            raise ValidationError(f"data must be a MemoryData, not {type(data).__name__}")
        self.data = data if data is not None else MemoryData()
        self.max_messages = max_messages
        self._clock = check_clock(clock)
        self._closed = False

    async def __aenter__(self) -> Self:
        self._check_open()
        return self

    async def close(self) -> None:
        """Detach from the data; later calls raise :class:`StoreUnavailableError`."""
        self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise StoreUnavailableError("the memory store is closed")

    @contextmanager
    def _session(self, session_id: str) -> Iterator[SessionData]:
        self._check_open()
        check_id(session_id, "session_id")
        session = self.data.sessions.get(session_id)
        if session is not None:
            with session.lock:
                if not session.deleted:
                    yield session
                    return
        raise session_not_found(session_id)

    def _touch(self, session: SessionData) -> None:
        old = session.last_activity_at
        session.last_activity_at = next_activity(old, self._clock())
        self.data.listing.move(session.user_id, old, session.last_activity_at, session.id)

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
        now = self._clock()
        return self._insert(SessionData(sid, user_id, now, now, meta))

    def _insert(self, fresh: SessionData) -> SessionInfo:
        # A deleted session leaves the map under its lock, so anything found here is live;
        # holding the new one's lock keeps writers out until it is listed.
        with fresh.lock:
            if self.data.sessions.setdefault(fresh.id, fresh) is not fresh:
                raise SessionExistsError(f"session {fresh.id!r} exists", session_id=fresh.id)
            self.data.listing.add(fresh.user_id, fresh.last_activity_at, fresh.id)
            return _info(fresh)

    async def get_session(self, session_id: str) -> SessionInfo | None:
        """The session, or ``None``."""
        try:
            with self._session(session_id) as session:
                return _info(session)
        except SessionNotFoundError:
            return None

    async def delete_session(self, session_id: str) -> bool:
        """Delete the session and everything it holds."""
        try:
            with self._session(session_id) as session:
                session.deleted = True
                self.data.sessions.pop(session_id, None)
                self.data.listing.remove(session.user_id, session.last_activity_at, session_id)
                return True
        except SessionNotFoundError:
            return False

    async def clear_session(self, session_id: str) -> None:
        """Drop rows and queues; keep the session, its user and metadata; cancel a live run."""
        with self._session(session_id) as s:
            now = self._clock()
            s.rows.clear()
            s.context_flags.clear()
            s.first_index = s.dropped_ui = 0
            for table in (s.items, s.late, s.approvals, s.checkpoints, s.commits):
                table.clear()
            s.context = ContextData()
            s.scoped.clear()
            s.resolved.clear()
            if s.current_run is not None and s.current_run.status == "live":
                s.current_run = s.current_run.model_copy(
                    update={"status": "cancelled", "ended_at": now}
                )
            self._touch(s)

    async def clone_session(
        self, source_id: str, target_id: str | None = None, *, up_to: int | None = None
    ) -> SessionInfo:
        """Copy rows ``[0, up_to)`` and the checkpoints in range into a new session."""
        with self._session(source_id) as src:
            end = src.message_count if up_to is None else up_to
            check_limit(source_id, "up_to", end, src.first_index, src.message_count)
            cut = end - src.first_index
            rows = [dict(r) for r in src.rows[:cut]]
            flags = src.context_flags[:cut]
            checkpoints = [cp for cp in src.checkpoints.values() if cp.message_count <= end]
            target = new_session_id(target_id, "target_id")
            now = self._clock()
            clone = SessionData(
                target,
                src.user_id,
                now,
                now,
                _metadata.validate_python(src.metadata),
                rows=rows,
                context_flags=flags,
                first_index=src.first_index,
                dropped_ui=src.dropped_ui,
                checkpoints={cp.checkpoint_id: cp.model_copy(deep=True) for cp in checkpoints},
            )
        return self._insert(clone)

    async def list_sessions(
        self, user_id: str, *, first: int = 20, cursor: str | None = None
    ) -> SessionsPage:
        """A user's sessions, most recent activity first, ties by id."""
        self._check_open()
        check_id(user_id, "user_id")
        check_listing_first(first)
        after = None if cursor is None else decode_sessions_cursor(user_id, cursor)
        page: list[SessionSummary] = []
        for session_id in self.data.listing.page(user_id, after, first + 1):
            session = self.data.sessions.get(session_id)
            if session is not None:
                with session.lock:
                    if not session.deleted:
                        page.append(_summary(session))
        next_cursor = None
        if len(page) > first:
            del page[first:]
            last = page[-1]
            next_cursor = encode_sessions_cursor(user_id, last.last_activity_at, last.id)
        return SessionsPage(sessions=tuple(page), next_cursor=next_cursor)

    # Rows

    async def append_messages(self, session_id: str, commit: MessageCommit) -> CommitResult:
        """Append rows with the checks and deliveries of the commit, atomically."""
        with self._session(session_id) as session:
            commit = coerce(MessageCommit, commit, session_id)
            outcome = check_commit(session_id, commit, commit_state(session, commit))
            if isinstance(outcome, CommitResult):
                return outcome
            now = self._clock()
            apply_plan(self.data, session, outcome, commit.commit_id, now)
            retain(session, self.max_messages)
            self._touch(session)
            return outcome.result

    async def get_scoped_state(self, scope: Scope, owner: str) -> JsonObject:
        """The ``(scope, owner)`` map (``{}`` if never written); a ``session`` owner must exist."""
        self._check_open()
        check_scope(None, scope, owner)
        if scope == "session":
            with self._session(owner) as session:
                return copy.deepcopy(session.scoped)
        with self.data.scoped_lock:
            return copy.deepcopy(self.data.scoped.get((scope, owner), {}))

    async def get_messages(self, session_id: str, *, limit: int | None = None) -> list[Message]:
        """Rows oldest first; ``limit`` keeps the last N."""
        with self._session(session_id) as session:
            if limit is not None:
                check_tail_limit(session_id, limit)
            rows = session.rows if limit is None else session.rows[-limit:] if limit else []
            return [parse_message(row) for row in rows]

    async def get_message_count(self, session_id: str) -> int:
        """All rows, context rows included."""
        with self._session(session_id) as session:
            return session.message_count

    async def get_ui_message_count(self, session_id: str) -> int:
        """Rows that are not context rows."""
        with self._session(session_id) as session:
            return session.dropped_ui + sum(not f for f in session.context_flags)

    async def page_messages(
        self,
        session_id: str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        order: PageOrder = "asc",
    ) -> MessagePage:
        """A page of rows in ``order``; ``next_cursor`` is ``None`` at the end."""
        with self._session(session_id) as session:
            rows, first = session.rows, session.first_index
            return page_rows(
                session_id, rows, first, parse_message, limit=limit, cursor=cursor, order=order
            )

    async def truncate_messages(
        self, session_id: str, keep: int, *, fence_run_id: str | None = None
    ) -> None:
        """Drop rows at index >= ``keep``, re-opening the items they delivered."""
        with self._session(session_id) as session:
            check_keep(session_id, keep, session.message_count)
            assert_fence(session_id, fence_run_id, session.current_run)
            cut_rows(session, keep)
            self._touch(session)

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        """Remove the newest ``count`` rows atomically and return them, oldest first."""
        with self._session(session_id) as session:
            check_pop_count(session_id, count, fence_run_id)
            assert_fence(session_id, fence_run_id, session.current_run)
            keep = pop_keep(count, session.first_index, session.message_count)
            if keep == session.message_count:
                return []
            popped = [parse_message(row) for row in session.rows[keep - session.first_index :]]
            cut_rows(session, keep)
            self._touch(session)
            return popped

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
        append ``messages``, atomically."""
        with self._session(session_id) as session:
            plan = plan_replace(
                session_id,
                keep,
                messages,
                expect_message_count,
                fence_run_id,
                message_count=session.message_count,
                first_index=session.first_index,
                current_run=session.current_run,
            )
            apply_plan(self.data, session, plan, None, self._clock())
            retain(session, self.max_messages)
            self._touch(session)
            return plan.result

    async def is_truncated(self, session_id: str) -> bool:
        """Whether retention has dropped old rows."""
        with self._session(session_id) as session:
            return session.first_index > 0

    # Runs

    async def finish_run(self, session_id: str, run_id: str, status: RunStatus) -> None:
        """End the current live run with ``status``."""
        with self._session(session_id) as session:
            check_id(run_id, "run_id", session_id=session_id)
            check_finish_status(session_id, status)
            assert_fence(session_id, run_id, session.current_run)
            assert session.current_run is not None
            session.current_run = session.current_run.model_copy(
                update={"status": status, "ended_at": self._clock()}
            )
            self._touch(session)

    # Queues

    async def record_context_item(
        self, session_id: str, record: StoredContextItem, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Queue a context item, once per key."""
        return self._enqueue(session_id, StoredContextItem, record, fence_run_id)

    async def list_undelivered_context_items(self, session_id: str) -> list[StoredContextItem]:
        """Queued items, by ``at`` then key."""
        return self._undelivered(session_id, lambda session: session.items)

    async def record_late_answer(
        self, session_id: str, answer: LateAnswer, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Queue a late answer, once per call id."""
        return self._enqueue(session_id, LateAnswer, answer, fence_run_id)

    async def list_undelivered_late_answers(self, session_id: str) -> list[LateAnswer]:
        """Queued late answers, by ``at`` then call id."""
        return self._undelivered(session_id, lambda session: session.late)

    def _enqueue(
        self, session_id: str, kind: type[Queued], record: Queued, fence_run_id: str | None
    ) -> RecordResult:
        """Queue a context item or a late answer, once per key (or call id)."""
        with self._session(session_id) as session:
            record = coerce(kind, record, session_id)
            assert_fence(session_id, fence_run_id, session.current_run)
            queue, key = _queue_of(session, record)
            result = record_once(queue, key, (record.model_copy(deep=True), None))
            if result.recorded:
                self._touch(session)
            return result

    def _undelivered(
        self,
        session_id: str,
        queue: Callable[[SessionData], dict[str, tuple[Queued, int | None]]],
    ) -> list[Queued]:
        """The queue's undelivered records in delivery order, as copies."""
        with self._session(session_id) as session:
            return [r.model_copy(deep=True) for r in undelivered_in_order(queue(session).values())]

    # Approvals

    async def add_pending_approvals(
        self,
        session_id: str,
        approvals: Sequence[PendingApproval],
        *,
        fence_run_id: str | None = None,
    ) -> None:
        """Add approvals, once per ``approval_id``."""
        with self._session(session_id) as session:
            checked = coerce_all(PendingApproval, approvals, session_id, "approvals")
            assert_fence(session_id, fence_run_id, session.current_run)
            copies = [approval.model_copy(deep=True) for approval in checked]
            if add_approvals_once(session.approvals, session.resolved, copies):
                self._touch(session)

    async def list_pending_approvals(self, session_id: str) -> list[PendingApproval]:
        """Unresolved approvals by ``requested_at``, then id."""
        with self._session(session_id) as session:
            pending = approvals_in_order(session.approvals.values())
            return [a.model_copy(deep=True) for a in pending]

    async def resolve_approval(self, session_id: str, approval_id: str) -> ApprovalResolution:
        """``"resolved"`` for exactly one caller, ``"already-resolved"`` for the rest."""
        with self._session(session_id) as session:
            check_id(approval_id, "approval_id", session_id=session_id)
            resolution = resolve_once(session_id, approval_id, session.approvals, session.resolved)
            if resolution == "resolved":
                self._touch(session)
            return resolution

    # Checkpoints

    async def save_checkpoint(
        self, session_id: str, checkpoint: Checkpoint, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Save a checkpoint, once per id."""
        with self._session(session_id) as session:
            checkpoint = coerce(Checkpoint, checkpoint, session_id)
            check_checkpoint_count(
                session_id,
                checkpoint.checkpoint_id,
                checkpoint.message_count,
                session.message_count,
            )
            assert_fence(session_id, fence_run_id, session.current_run)
            stored = checkpoint.model_copy(deep=True)
            result = record_once(session.checkpoints, stored.checkpoint_id, stored)
            if result.recorded:
                self._touch(session)
            return result

    async def get_checkpoint(self, session_id: str, checkpoint_id: str) -> Checkpoint | None:
        """The checkpoint, or ``None``."""
        with self._session(session_id) as session:
            check_id(checkpoint_id, "checkpoint_id", session_id=session_id)
            found = session.checkpoints.get(checkpoint_id)
            return None if found is None else found.model_copy(deep=True)

    async def latest_checkpoint(self, session_id: str) -> Checkpoint | None:
        """The checkpoint with the highest ``message_count``, then the newest."""
        checkpoints = await self.list_checkpoints(session_id)
        return checkpoints[-1] if checkpoints else None

    async def list_checkpoints(self, session_id: str) -> list[Checkpoint]:
        """Checkpoints by ``message_count``, then ``created_at``, then id."""
        with self._session(session_id) as session:
            ordered = checkpoints_in_order(session.checkpoints.values())
            return [c.model_copy(deep=True) for c in ordered]

    async def page_checkpoints(
        self,
        session_id: str,
        *,
        prefix: str = "",
        before: str | None = None,
        limit: int = 50,
    ) -> list[Checkpoint]:
        """Up to ``limit`` checkpoints under ``prefix`` and below ``before``, greatest id first."""
        with self._session(session_id) as session:
            where = checkpoint_range(session_id, prefix, before, limit)
            return _checkpoint_pages.page(session, where)

    async def delete_checkpoints(self, session_id: str, checkpoint_ids: Sequence[str]) -> int:
        """Delete the named checkpoints (unknown ids are skipped); how many were deleted."""
        with self._session(session_id) as session:
            ids = check_checkpoint_ids(session_id, checkpoint_ids)
            gone = _checkpoint_pages.delete(session, ids)
            if gone:
                self._touch(session)
            return gone


def _queue_of(
    session: SessionData, record: Queued
) -> tuple[dict[str, tuple[Queued, int | None]], str]:
    """The session's queue for ``record`` and its key there."""
    if isinstance(record, StoredContextItem):
        return session.items, record.key
    return session.late, record.call_id


def _info(session: SessionData) -> SessionInfo:
    return SessionInfo(
        id=session.id,
        user_id=session.user_id,
        created_at=session.created_at,
        last_activity_at=session.last_activity_at,
        message_count=session.message_count,
        current_run=session.current_run,
        metadata=_metadata.validate_python(session.metadata),
    )


def _summary(session: SessionData) -> SessionSummary:
    return SessionSummary(
        id=session.id,
        created_at=session.created_at,
        last_activity_at=session.last_activity_at,
        message_count=session.message_count,
        pending_approvals=len(session.approvals),
    )


_OPTIONS = frozenset({"clock", "max_messages"})


def open_url(url: str, *, namespace: str | None = None, **options: Any) -> MemoryStateStore:
    """The ``memory://`` entry point; stores opened on ``memory://name`` share their data.

    Options are keywords only: a query string or an unknown keyword is a
    :class:`ValidationError`, never silently part of the name or ignored.
    """
    unknown = set(options) - _OPTIONS
    if unknown:
        raise ValidationError(
            f"unknown memory store option(s) {', '.join(sorted(map(repr, unknown)))} "
            f"(known: {', '.join(sorted(_OPTIONS))})"
        )
    if namespace is not None and not isinstance(namespace, str):
        raise ValidationError(f"namespace must be a string, not {type(namespace).__name__}")
    name = url.removeprefix("memory://").strip("/")
    if "?" in name or "#" in name:
        raise ValidationError(
            f"memory URL {redact_url(url)!r} has a query or fragment: "
            "memory:// takes its options as keywords"
        )
    if namespace:
        name = f"{name}/{namespace}"
    data = _SHARED.setdefault(name, MemoryData()) if name else None
    return MemoryStateStore(data, **options)
