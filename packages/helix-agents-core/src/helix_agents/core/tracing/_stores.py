"""The traced stores: every protocol call of the wrapped store, each inside its span."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Generic, Protocol, Self, TypeVar

from ..context.models import (
    Compaction,
    CompactionResult,
    ContextWindow,
    HistorySearch,
    OutputRef,
    OutputSlice,
)
from ..context.outputs import DEFAULT_MAX_CHARS
from ..context.protocol import ContextStore
from ..handles import SessionHandles
from ..messages import JsonObject, Message
from ..models import (
    ApprovalResolution,
    Checkpoint,
    CommitResult,
    LateAnswer,
    MessageCommit,
    MessagePage,
    PageOrder,
    PendingApproval,
    RecordResult,
    RunStatus,
    Scope,
    SessionInfo,
    SessionsPage,
    StoredContextItem,
)
from ..protocol import SessionStateStore
from ._telemetry import Telemetry

__all__ = ["FullStore", "TracedContextStore", "TracedStore"]


class FullStore(SessionStateStore, ContextStore, Protocol):
    """A store with both protocols, as every store of the family is."""


S = TypeVar("S", bound=SessionStateStore)
C = TypeVar("C", bound=FullStore)


class TracedStore(SessionHandles, Generic[S]):
    """``inner`` with a span around each call; a :class:`SessionStateStore` itself.

    Opening and closing pass straight through. ``session(id)`` handles call
    the traced store, so their calls are traced too.
    """

    __slots__ = ("_inner", "_t")

    def __init__(self, inner: S, telemetry: Telemetry) -> None:
        self._inner = inner
        self._t = telemetry

    def __repr__(self) -> str:
        return f"traced({self._inner!r})"

    @property
    def inner(self) -> S:
        """The wrapped store, for what is not in the protocol (``migrate()``, ``path``, …)."""
        return self._inner

    async def __aenter__(self) -> Self:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._inner.__aexit__(exc_type, exc, tb)

    async def close(self) -> None:
        """Close the wrapped store."""
        await self._inner.close()

    async def create_session(
        self,
        session_id: str | None = None,
        *,
        user_id: str | None = None,
        metadata: JsonObject | None = None,
    ) -> SessionInfo:
        """Create a session; mint a unique id when none is given."""
        call = self._inner.create_session(session_id, user_id=user_id, metadata=metadata)
        return await self._t.run("create_session", session_id, call)

    async def get_session(self, session_id: str) -> SessionInfo | None:
        """The session, or ``None`` if it does not exist."""
        return await self._t.run("get_session", session_id, self._inner.get_session(session_id))

    async def delete_session(self, session_id: str) -> bool:
        """Delete the session and everything it holds; ``True`` if it existed."""
        call = self._inner.delete_session(session_id)
        return await self._t.run("delete_session", session_id, call)

    async def clear_session(self, session_id: str) -> None:
        """Drop rows, checkpoints, approvals, items and late answers; cancel a live run."""
        await self._t.run("clear_session", session_id, self._inner.clear_session(session_id))

    async def clone_session(
        self, source_id: str, target_id: str | None = None, *, up_to: int | None = None
    ) -> SessionInfo:
        """Copy rows ``[0, up_to)`` and the checkpoints in range into a new session."""
        call = self._inner.clone_session(source_id, target_id, up_to=up_to)
        return await self._t.run("clone_session", source_id, call)

    async def list_sessions(
        self, user_id: str, *, first: int = 20, cursor: str | None = None
    ) -> SessionsPage:
        """A user's sessions, most recent activity first, ties by id."""
        call = self._inner.list_sessions(user_id, first=first, cursor=cursor)
        return await self._t.run("list_sessions", None, call)

    async def get_scoped_state(self, scope: Scope, owner: str) -> JsonObject:
        """The ``(scope, owner)`` map (``{}`` if never written); a ``session`` owner must exist."""
        call = self._inner.get_scoped_state(scope, owner)
        return await self._t.run("get_scoped_state", owner if scope == "session" else None, call)

    async def append_messages(self, session_id: str, commit: MessageCommit) -> CommitResult:
        """Append rows with the checks and deliveries of the commit, atomically."""
        call = self._inner.append_messages(session_id, commit)
        return await self._t.run("append_messages", session_id, call)

    async def get_messages(self, session_id: str, *, limit: int | None = None) -> list[Message]:
        """Rows oldest first; ``limit`` keeps the last N."""
        call = self._inner.get_messages(session_id, limit=limit)
        return await self._t.run("get_messages", session_id, call)

    async def get_message_count(self, session_id: str) -> int:
        """All rows, context rows included."""
        call = self._inner.get_message_count(session_id)
        return await self._t.run("get_message_count", session_id, call)

    async def get_ui_message_count(self, session_id: str) -> int:
        """Rows that are not context rows."""
        call = self._inner.get_ui_message_count(session_id)
        return await self._t.run("get_ui_message_count", session_id, call)

    async def page_messages(
        self,
        session_id: str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        order: PageOrder = "asc",
    ) -> MessagePage:
        """A page of rows in ``order``; ``next_cursor`` is ``None`` at the end."""
        call = self._inner.page_messages(session_id, limit=limit, cursor=cursor, order=order)
        return await self._t.run("page_messages", session_id, call)

    async def truncate_messages(
        self, session_id: str, keep: int, *, fence_run_id: str | None = None
    ) -> None:
        """Drop rows at index >= ``keep``, re-opening the items they delivered."""
        call = self._inner.truncate_messages(session_id, keep, fence_run_id=fence_run_id)
        await self._t.run("truncate_messages", session_id, call)

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        """Remove the newest ``count`` rows atomically and return them, oldest first."""
        call = self._inner.pop_messages(session_id, count, fence_run_id=fence_run_id)
        return await self._t.run("pop_messages", session_id, call)

    async def replace_messages(
        self,
        session_id: str,
        keep: int,
        messages: Sequence[Message],
        *,
        expect_message_count: int,
        fence_run_id: str | None = None,
    ) -> CommitResult:
        """If the log still holds ``expect_message_count`` rows, cut it to ``keep`` and append."""
        call = self._inner.replace_messages(
            session_id,
            keep,
            messages,
            expect_message_count=expect_message_count,
            fence_run_id=fence_run_id,
        )
        return await self._t.run("replace_messages", session_id, call)

    async def is_truncated(self, session_id: str) -> bool:
        """Whether retention has dropped old rows."""
        return await self._t.run("is_truncated", session_id, self._inner.is_truncated(session_id))

    async def finish_run(self, session_id: str, run_id: str, status: RunStatus) -> None:
        """End the current live run with ``status``."""
        call = self._inner.finish_run(session_id, run_id, status)
        await self._t.run("finish_run", session_id, call)

    async def record_context_item(
        self, session_id: str, record: StoredContextItem, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Queue a context item, once per key."""
        call = self._inner.record_context_item(session_id, record, fence_run_id=fence_run_id)
        return await self._t.run("record_context_item", session_id, call)

    async def list_undelivered_context_items(self, session_id: str) -> list[StoredContextItem]:
        """Queued items, by ``at`` then key."""
        call = self._inner.list_undelivered_context_items(session_id)
        return await self._t.run("list_undelivered_context_items", session_id, call)

    async def record_late_answer(
        self, session_id: str, answer: LateAnswer, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Queue a late answer, once per call id."""
        call = self._inner.record_late_answer(session_id, answer, fence_run_id=fence_run_id)
        return await self._t.run("record_late_answer", session_id, call)

    async def list_undelivered_late_answers(self, session_id: str) -> list[LateAnswer]:
        """Queued late answers, by ``at`` then call id."""
        call = self._inner.list_undelivered_late_answers(session_id)
        return await self._t.run("list_undelivered_late_answers", session_id, call)

    async def add_pending_approvals(
        self,
        session_id: str,
        approvals: Sequence[PendingApproval],
        *,
        fence_run_id: str | None = None,
    ) -> None:
        """Add approvals, once per ``approval_id``."""
        call = self._inner.add_pending_approvals(session_id, approvals, fence_run_id=fence_run_id)
        await self._t.run("add_pending_approvals", session_id, call)

    async def list_pending_approvals(self, session_id: str) -> list[PendingApproval]:
        """Unresolved approvals by ``requested_at``, then id."""
        call = self._inner.list_pending_approvals(session_id)
        return await self._t.run("list_pending_approvals", session_id, call)

    async def resolve_approval(self, session_id: str, approval_id: str) -> ApprovalResolution:
        """``"resolved"`` for exactly one caller, ``"already-resolved"`` for the rest."""
        call = self._inner.resolve_approval(session_id, approval_id)
        return await self._t.run("resolve_approval", session_id, call)

    async def save_checkpoint(
        self, session_id: str, checkpoint: Checkpoint, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Save a checkpoint, once per id."""
        call = self._inner.save_checkpoint(session_id, checkpoint, fence_run_id=fence_run_id)
        return await self._t.run("save_checkpoint", session_id, call)

    async def get_checkpoint(self, session_id: str, checkpoint_id: str) -> Checkpoint | None:
        """The checkpoint, or ``None``."""
        call = self._inner.get_checkpoint(session_id, checkpoint_id)
        return await self._t.run("get_checkpoint", session_id, call)

    async def latest_checkpoint(self, session_id: str) -> Checkpoint | None:
        """The checkpoint with the highest ``message_count``, then the newest."""
        call = self._inner.latest_checkpoint(session_id)
        return await self._t.run("latest_checkpoint", session_id, call)

    async def list_checkpoints(self, session_id: str) -> list[Checkpoint]:
        """Checkpoints by ``message_count``, then ``created_at``, then id."""
        call = self._inner.list_checkpoints(session_id)
        return await self._t.run("list_checkpoints", session_id, call)

    async def page_checkpoints(
        self,
        session_id: str,
        *,
        prefix: str = "",
        before: str | None = None,
        limit: int = 50,
    ) -> list[Checkpoint]:
        """Up to ``limit`` checkpoints whose id starts with ``prefix``, below ``before``."""
        call = self._inner.page_checkpoints(session_id, prefix=prefix, before=before, limit=limit)
        return await self._t.run("page_checkpoints", session_id, call)

    async def delete_checkpoints(self, session_id: str, checkpoint_ids: Sequence[str]) -> int:
        """Delete the named checkpoints (unknown ids are skipped); how many were deleted."""
        call = self._inner.delete_checkpoints(session_id, checkpoint_ids)
        return await self._t.run("delete_checkpoints", session_id, call)


class TracedContextStore(TracedStore[C]):
    """A :class:`TracedStore` of a store that also keeps outputs and history (ContextStore)."""

    __slots__ = ()

    async def store_output(
        self,
        session_id: str,
        content: str,
        *,
        tool_name: str | None = None,
        key: str | None = None,
    ) -> OutputRef:
        """Store ``content``; a repeat under the same ``key`` returns the first reference."""
        call = self._inner.store_output(session_id, content, tool_name=tool_name, key=key)
        return await self._t.run("store_output", session_id, call)

    async def get_output(self, session_id: str, output_id: str) -> OutputRef:
        """The reference of a stored output."""
        call = self._inner.get_output(session_id, output_id)
        return await self._t.run("get_output", session_id, call)

    async def read_output(
        self,
        session_id: str,
        output_id: str,
        *,
        start_line: int = 1,
        end_line: int | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> OutputSlice:
        """Lines ``start_line..end_line`` (1-based, inclusive), cut to ``max_chars``."""
        call = self._inner.read_output(
            session_id, output_id, start_line=start_line, end_line=end_line, max_chars=max_chars
        )
        return await self._t.run("read_output", session_id, call)

    async def grep_output(
        self,
        session_id: str,
        output_id: str,
        pattern: str,
        *,
        context_lines: int = 2,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> OutputSlice:
        """Lines matching ``pattern`` (RE2), ``context_lines`` around each."""
        call = self._inner.grep_output(
            session_id, output_id, pattern, context_lines=context_lines, max_chars=max_chars
        )
        return await self._t.run("grep_output", session_id, call)

    async def record_compaction(self, session_id: str, compaction: Compaction) -> CompactionResult:
        """Record the summary and the new window start in one atomic step."""
        call = self._inner.record_compaction(session_id, compaction)
        return await self._t.run("record_compaction", session_id, call)

    async def get_window(self, session_id: str) -> ContextWindow:
        """The latest summary row and the rows from the window start on."""
        return await self._t.run("get_window", session_id, self._inner.get_window(session_id))

    async def search_history(
        self,
        session_id: str,
        *,
        grep: str | None = None,
        tool_name: str | None = None,
        limit: int = 20,
    ) -> HistorySearch:
        """Rows of the archive and the live log that match, newest first."""
        call = self._inner.search_history(session_id, grep=grep, tool_name=tool_name, limit=limit)
        return await self._t.run("search_history", session_id, call)
