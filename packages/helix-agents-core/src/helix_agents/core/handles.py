"""A session handle: one session of a store, as a runtime uses it.

``store.session(id)`` on every store of the family (the :class:`SessionHandles`
mixin), or :func:`session_handle` on any :class:`SessionStateStore`. The
handle holds no state of its own: every call is one call of the store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import JsonValue

from .edits import check_rows
from .inputs import check_id
from .messages import JsonObject, Message
from .models import (
    ApprovalResolution,
    CommitResult,
    MessageCommit,
    MessagePage,
    PageOrder,
    PendingApproval,
    SessionInfo,
    SessionsPage,
)
from .protocol import SessionStateStore

__all__ = ["SessionHandle", "SessionHandles", "session_handle", "user_sessions"]


class SessionHandle:
    """The session ``session_id`` of ``store``; it need not exist until a call needs it.

    A malformed id is a :class:`~helix_agents.core.ValidationError` at once.
    """

    __slots__ = ("_id", "_store")

    def __init__(self, store: SessionStateStore, session_id: str) -> None:
        self._store = store
        self._id = check_id(session_id, "session_id")

    def __repr__(self) -> str:
        return f"SessionHandle({self._id!r})"

    @property
    def id(self) -> str:
        """The session's id."""
        return self._id

    @property
    def store(self) -> SessionStateStore:
        """The store the session lives in."""
        return self._store

    async def info(self) -> SessionInfo | None:
        """The session, or ``None`` if it does not exist."""
        return await self._store.get_session(self._id)

    async def messages(self, limit: int | None = None) -> list[Message]:
        """Rows oldest first; ``limit`` keeps the last N."""
        return await self._store.get_messages(self._id, limit=limit)

    async def page(
        self, limit: int = 50, cursor: str | None = None, order: PageOrder = "asc"
    ) -> MessagePage:
        """A page of rows in ``order``; pass ``next_cursor`` back for the next one."""
        return await self._store.page_messages(self._id, limit=limit, cursor=cursor, order=order)

    async def append(
        self,
        *messages: Message | JsonObject,
        expect_message_count: int | None = None,
        fence_run_id: str | None = None,
        commit_id: str | None = None,
    ) -> CommitResult:
        """Append rows (messages or their JSON objects) in one commit."""
        commit = MessageCommit(
            messages=tuple(check_rows(self._id, messages)),
            expect_message_count=expect_message_count,
            fence_run_id=fence_run_id,
            commit_id=commit_id,
        )
        return await self._store.append_messages(self._id, commit)

    async def pop(self, count: int = 1) -> list[Message]:
        """Remove the newest ``count`` rows atomically and return them, oldest first."""
        return await self._store.pop_messages(self._id, count)

    async def clear(self) -> None:
        """Drop rows, checkpoints, approvals and queues; keep the session."""
        await self._store.clear_session(self._id)

    async def truncated(self) -> bool:
        """Whether retention has dropped old rows."""
        return await self._store.is_truncated(self._id)

    async def pending_approvals(self) -> list[PendingApproval]:
        """Unresolved approvals by ``requested_at``, then id."""
        return await self._store.list_pending_approvals(self._id)

    async def add_pending_approvals(self, approvals: Sequence[PendingApproval]) -> None:
        """Add approvals, once per ``approval_id``."""
        await self._store.add_pending_approvals(self._id, approvals)

    async def resolve_approval(self, approval_id: str) -> ApprovalResolution:
        """``"resolved"`` for exactly one caller, ``"already-resolved"`` for the rest."""
        return await self._store.resolve_approval(self._id, approval_id)


def session_handle(store: SessionStateStore, session_id: str) -> SessionHandle:
    """The handle of ``session_id`` on any store."""
    return SessionHandle(store, session_id)


async def user_sessions(
    store: SessionStateStore, user_id: str, first: int = 20, cursor: str | None = None
) -> SessionsPage:
    """A page of ``user_id``'s session summaries on any store, most recent activity first."""
    return await store.list_sessions(user_id, first=first, cursor=cursor)


class SessionHandles:
    """``session(id)`` and ``sessions(user_id)`` for a store class that implements the protocol."""

    __slots__ = ()

    def session(self: SessionStateStore, session_id: str) -> SessionHandle:
        """The handle of ``session_id`` on this store."""
        return SessionHandle(self, session_id)

    async def sessions(
        self: SessionStateStore,
        user_id: str,
        first: int = 20,
        cursor: str | None = None,
        *,
        title: str | None = None,
        metadata: Mapping[str, JsonValue] | None = None,
    ) -> SessionsPage:
        """A page of ``user_id``'s session summaries, most recent activity first; filtered
        by title and metadata as ``list_sessions`` filters (META-6)."""
        return await self.list_sessions(
            user_id, first=first, cursor=cursor, title=title, metadata=metadata
        )
