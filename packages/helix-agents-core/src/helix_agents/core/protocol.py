"""The async protocol every session store implements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from pydantic import JsonValue

from .expiry import SessionExpiry, SweepResult
from .messages import JsonObject, Message
from .models import (
    ApprovalResolution,
    Branch,
    Checkpoint,
    CommitResult,
    LateAnswer,
    ListedSessionsPage,
    MessageCommit,
    MessagePage,
    PageOrder,
    PendingApproval,
    RecordResult,
    Redaction,
    RunStatus,
    Scope,
    SessionInfo,
    SessionsPage,
    StoredContextItem,
    UsageTotals,
    UserUsage,
)

__all__ = ["SessionStateStore"]


@runtime_checkable
class SessionStateStore(Protocol):
    """Durable per-session state for an agent runtime.

    Every write is atomic: it lands whole or not at all, and a refused write
    leaves every read unchanged. Every method on a missing session raises
    :class:`~helix_agents.core.SessionNotFoundError`, except
    :meth:`get_session` and :meth:`delete_session`.
    """

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def close(self) -> None:
        """Free the store's connections (only those it opened itself)."""
        ...

    # Sessions

    async def create_session(
        self,
        session_id: str | None = None,
        *,
        user_id: str | None = None,
        metadata: JsonObject | None = None,
    ) -> SessionInfo:
        """Create a session; mint a unique id when none is given."""
        ...

    async def get_session(self, session_id: str) -> SessionInfo | None:
        """The session, or ``None`` if it does not exist."""
        ...

    async def delete_session(self, session_id: str) -> bool:
        """Delete the session and everything it holds; ``True`` if it existed."""
        ...

    async def clear_session(self, session_id: str) -> None:
        """Drop rows, checkpoints, approvals, items and late answers; cancel a live run."""
        ...

    async def clone_session(
        self, source_id: str, target_id: str | None = None, *, up_to: int | None = None
    ) -> SessionInfo:
        """Copy rows ``[0, up_to)`` and the checkpoints in range into a new session."""
        ...

    async def fork_session(
        self,
        source_id: str,
        target_id: str | None = None,
        *,
        at: int | None = None,
        checkpoint_id: str | None = None,
    ) -> SessionInfo:
        """A branch: a copy of rows ``[0, at)`` (all by default, or up to the checkpoint
        ``checkpoint_id``) and the checkpoints in range that names its parent
        (``SessionInfo.branch_of``) and is listed by ``list_branches`` (BR-1..BR-6)."""
        ...

    async def list_branches(self, session_id: str) -> list[Branch]:
        """The branches forked from the session that still exist, oldest first (BR-4)."""
        ...

    async def list_sessions(
        self,
        user_id: str,
        *,
        first: int = 20,
        cursor: str | None = None,
        title: str | None = None,
        metadata: Mapping[str, JsonValue] | None = None,
    ) -> SessionsPage:
        """A user's sessions, most recent activity first, ties by id. With ``title`` (a
        case-insensitive substring of the title) or ``metadata`` (top-level keys equal as
        JSON), only those that pass; a filtered page may be short yet carry a cursor
        (docs/lifecycle.md, META-6)."""
        ...

    async def list_all_sessions(
        self,
        *,
        first: int = 20,
        cursor: str | None = None,
        user_id: str | None = None,
        active_since: datetime | None = None,
        metadata: Mapping[str, JsonValue] | None = None,
        title: str | None = None,
    ) -> ListedSessionsPage:
        """Every session of the store, by session id ascending (code point order), as pages
        of ``first`` (1..500) :class:`ListedSession`; follow ``next_cursor`` until ``None``.

        The cursor is the last id covered, so a walk never repeats a session nor skips
        one that existed for the whole walk, whatever is written meanwhile. Filters: the
        owner ``user_id``, last activity at or after ``active_since`` (timezone-aware), and
        each top-level ``metadata`` key equal (as JSON) to the given value, the ``title``
        holding ``title`` ignoring case (META-6). With filters a
        page may hold fewer than ``first`` sessions yet carry a cursor: a call reads a
        bounded number of sessions. A bad argument, or a cursor that is malformed or from
        a listing with other filters, is a ``ValidationError``.
        """
        ...

    # Metadata, titles and redaction (docs/lifecycle.md)

    async def update_session_metadata(
        self,
        session_id: str,
        patch: Mapping[str, JsonValue],
        *,
        expect_version: int | None = None,
    ) -> SessionInfo:
        """Merge ``patch`` into the metadata as a JSON Merge Patch (a key set to ``None`` is
        removed) if the metadata version is ``expect_version`` (when given); the session
        after it (META-2, META-3)."""
        ...

    async def set_session_title(
        self, session_id: str, title: str | None, *, expect_version: int | None = None
    ) -> SessionInfo:
        """Set the title (1..200 characters) or clear it (``None``); a metadata update
        (META-4)."""
        ...

    async def redact_message(
        self,
        session_id: str,
        row: int | str,
        *,
        reason: str,
        replacement: str | None = None,
        actor: str | None = None,
    ) -> Redaction:
        """Replace a retained row (its index, or the first row with that id) with a
        tombstone in place and record who, when and why; the record (RED-1..RED-6)."""
        ...

    async def list_redactions(self, session_id: str) -> list[Redaction]:
        """The session's redaction audit, oldest first (RED-5)."""
        ...

    async def erase_user(self, user_id: str) -> list[str]:
        """Delete every session of ``user_id`` (everything each holds) and the user's map
        of scoped state; the erased session ids, sorted (ERA-1..ERA-5)."""
        ...

    # Token and cost usage (docs/lifecycle.md, "Usage")

    async def get_usage(self, session_id: str) -> UsageTotals:
        """The usage the session's commits recorded, per model and overall (USG-2)."""
        ...

    async def get_user_usage(self, user_id: str, *, cursor: str | None = None) -> UserUsage:
        """The usage of the user's sessions summed, a bounded number of sessions per
        call; ``next_cursor`` (not ``None``) continues with the rest (USG-5)."""
        ...

    # Expiry (docs/lifecycle.md, "Expiry")

    async def set_session_expiry(
        self,
        session_id: str,
        *,
        idle_ttl: float | timedelta | None = None,
        expires_at: datetime | None = None,
    ) -> SessionExpiry:
        """Give the session its own idle TTL (it replaces the store's ``idle_ttl``) and/or
        an absolute expiry; both ``None`` clears them; the settings and the deadline
        (TTL-2)."""
        ...

    async def get_session_expiry(self, session_id: str) -> SessionExpiry:
        """The session's own expiry settings and when it expires (TTL-2)."""
        ...

    async def sweep(self, *, limit: int = 1_000) -> SweepResult:
        """Delete expired sessions, reading at most ``limit`` (1..100,000) sessions from
        where this store's last sweep stopped (TTL-4)."""
        ...

    # Scoped state (docs/scoped-state.md)

    async def get_scoped_state(self, scope: Scope, owner: str) -> JsonObject:
        """The ``(scope, owner)`` map (``{}`` if never written); a ``session`` owner must exist."""
        ...

    # Rows

    async def append_messages(self, session_id: str, commit: MessageCommit) -> CommitResult:
        """Append rows with the checks and deliveries of the commit, atomically."""
        ...

    async def get_messages(self, session_id: str, *, limit: int | None = None) -> list[Message]:
        """Rows oldest first; ``limit`` keeps the last N."""
        ...

    async def get_message_count(self, session_id: str) -> int:
        """All rows, context rows included."""
        ...

    async def get_ui_message_count(self, session_id: str) -> int:
        """Rows that are not context rows."""
        ...

    async def page_messages(
        self,
        session_id: str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        order: PageOrder = "asc",
    ) -> MessagePage:
        """A page of rows in ``order``; ``next_cursor`` is ``None`` at the end."""
        ...

    async def truncate_messages(
        self, session_id: str, keep: int, *, fence_run_id: str | None = None
    ) -> None:
        """Drop rows at index >= ``keep``, re-opening the items they delivered."""
        ...

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        """Remove the newest ``count`` rows atomically and return them, oldest first.

        ``count`` is in 1..500; fewer rows go when fewer are retained, none from
        an empty log (``[]``, nothing written). Removed rows take with them what
        a truncate would (MSG-4, MSG-7).
        """
        ...

    async def replace_messages(
        self,
        session_id: str,
        keep: int,
        messages: Sequence[Message],
        *,
        expect_message_count: int,
        fence_run_id: str | None = None,
        archive: bool = False,
    ) -> CommitResult:
        """If the log still holds ``expect_message_count`` rows, cut it to ``keep`` rows and
        append ``messages``, atomically (MSG-8). With ``archive`` the rows cut go to the
        archive in the same step, but those ``messages`` carry again by row ``id`` (CS-19)."""
        ...

    async def is_truncated(self, session_id: str) -> bool:
        """Whether retention has dropped old rows."""
        ...

    # Runs

    async def finish_run(self, session_id: str, run_id: str, status: RunStatus) -> None:
        """End the current live run with ``status``."""
        ...

    # Context items and late answers

    async def record_context_item(
        self, session_id: str, record: StoredContextItem, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Queue a context item, once per key."""
        ...

    async def list_undelivered_context_items(self, session_id: str) -> list[StoredContextItem]:
        """Queued items, by ``at`` then key."""
        ...

    async def record_late_answer(
        self, session_id: str, answer: LateAnswer, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Queue a late answer, once per call id."""
        ...

    async def list_undelivered_late_answers(self, session_id: str) -> list[LateAnswer]:
        """Queued late answers, by ``at`` then call id."""
        ...

    # Approvals

    async def add_pending_approvals(
        self,
        session_id: str,
        approvals: Sequence[PendingApproval],
        *,
        fence_run_id: str | None = None,
    ) -> None:
        """Add approvals, once per ``approval_id``."""
        ...

    async def list_pending_approvals(self, session_id: str) -> list[PendingApproval]:
        """Unresolved approvals by ``requested_at``, then id."""
        ...

    async def resolve_approval(self, session_id: str, approval_id: str) -> ApprovalResolution:
        """``"resolved"`` for exactly one caller, ``"already-resolved"`` for the rest."""
        ...

    # Checkpoints

    async def save_checkpoint(
        self, session_id: str, checkpoint: Checkpoint, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Save a checkpoint, once per id."""
        ...

    async def get_checkpoint(self, session_id: str, checkpoint_id: str) -> Checkpoint | None:
        """The checkpoint, or ``None``."""
        ...

    async def latest_checkpoint(self, session_id: str) -> Checkpoint | None:
        """The checkpoint with the highest ``message_count``, then the newest."""
        ...

    async def list_checkpoints(self, session_id: str) -> list[Checkpoint]:
        """Checkpoints by ``message_count``, then ``created_at``, then id."""
        ...

    async def page_checkpoints(
        self,
        session_id: str,
        *,
        prefix: str = "",
        before: str | None = None,
        limit: int = 50,
    ) -> list[Checkpoint]:
        """Up to ``limit`` checkpoints whose id starts with ``prefix`` and sorts below
        ``before``, greatest id first (ids compare by code point)."""
        ...

    async def delete_checkpoints(self, session_id: str, checkpoint_ids: Sequence[str]) -> int:
        """Delete the named checkpoints (unknown ids are skipped); how many were deleted."""
        ...
