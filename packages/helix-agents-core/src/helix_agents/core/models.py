"""Typed, immutable values that stores accept and return."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import AwareDatetime, ConfigDict, Field, JsonValue, StrictInt, StrictStr

from .messages import ContextItem, JsonObject, Message, Value

__all__ = [
    "ApprovalResolution",
    "Branch",
    "Checkpoint",
    "CommitResult",
    "ContextItemDelivery",
    "LateAnswer",
    "LateAnswerDelivery",
    "MessageCommit",
    "MessagePage",
    "PageOrder",
    "PendingApproval",
    "RecordResult",
    "Redaction",
    "RunInfo",
    "RunStatus",
    "Scope",
    "ScopedStateDelta",
    "SessionInfo",
    "ListedSession",
    "ListedSessionsPage",
    "SessionSummary",
    "SessionsPage",
    "StartRun",
    "StoredContextItem",
]

RunStatus: TypeAlias = Literal["live", "completed", "failed", "cancelled", "awaiting_approval"]
"""The state of a session's current run."""
PageOrder: TypeAlias = Literal["asc", "desc"]
"""The order of a page of rows: oldest first or newest first."""
Scope: TypeAlias = Literal["app", "user", "session"]
"""Whose map a scoped-state delta changes: an app's, a user's or a session's."""
ApprovalResolution: TypeAlias = Literal["resolved", "already-resolved"]
"""What resolving an approval did: resolved it now, or found it resolved before."""
# Ids and counts are taken as given: bytes, bools, floats and numeric strings are
# refused, not converted (docs/limits.md).
NonNegative = Annotated[StrictInt, Field(ge=0)]
Id: TypeAlias = StrictStr


class _Value(Value):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StoredContextItem(_Value):
    """A context item queued under ``key``, waiting to be delivered in a row."""

    key: Id
    item: ContextItem
    at: AwareDatetime


class LateAnswer(_Value):
    """A tool answer that arrived after the run that asked for it had ended."""

    call_id: Id
    tool_name: str
    output: JsonValue
    at: AwareDatetime


class StartRun(_Value):
    """Make ``run_id`` the session's current live run, after rewinding to ``rewind_to`` rows."""

    run_id: Id
    rewind_to: NonNegative | None = None


class ContextItemDelivery(_Value):
    """Mark the item ``key`` delivered by the commit's row at ``row_offset``."""

    key: Id
    row_offset: StrictInt


class LateAnswerDelivery(_Value):
    """Mark the late answer ``call_id`` delivered by the commit's row at ``row_offset``."""

    call_id: Id
    row_offset: StrictInt


class ScopedStateDelta(_Value):
    """Keys to set in the ``(scope, owner)`` map, atomically with the commit.

    ``owner`` names the ``app`` or ``user`` map; a ``session`` delta has none: it is the
    commit's own session.
    """

    scope: Scope
    owner: Id | None = None
    changes: JsonObject


class MessageCommit(_Value):
    """Rows to append, with the checks and deliveries that land atomically with them."""

    messages: tuple[Message, ...] = ()
    start_run: StartRun | None = None
    fence_run_id: Id | None = None
    expect_message_count: NonNegative | None = None
    deliver_context_items: tuple[ContextItemDelivery, ...] = ()
    deliver_late_answers: tuple[LateAnswerDelivery, ...] = ()
    commit_id: Id | None = None
    scoped_state: tuple[ScopedStateDelta, ...] = ()


class CommitResult(_Value):
    """Where a commit's rows landed: indexes ``first_index .. message_count-1``."""

    first_index: int
    message_count: int
    replayed: bool = False


class RecordResult(_Value):
    """Whether an insert-once write stored something new."""

    recorded: bool


class RunInfo(_Value):
    """The run that owns (or last owned) a session."""

    run_id: Id
    status: RunStatus
    started_at: AwareDatetime
    ended_at: AwareDatetime | None = None


class Branch(_Value):
    """Where a branch was forked (docs/lifecycle.md, "Branches"): the branch, its parent,
    the rows it kept (``at``), the checkpoint it was forked at, if any, and when."""

    session_id: str
    parent_id: str
    at: NonNegative
    checkpoint_id: str | None = None
    created_at: AwareDatetime


class SessionInfo(_Value):
    """A session's identity, owner, counters and current run; its metadata, title,
    metadata version and, for a branch, where it was forked (docs/lifecycle.md)."""

    id: str
    user_id: str | None
    created_at: AwareDatetime
    last_activity_at: AwareDatetime
    message_count: int
    current_run: RunInfo | None = None
    metadata: JsonObject = Field(default_factory=dict)
    title: str | None = None
    metadata_version: int = 0
    branch_of: Branch | None = None


class SessionSummary(_Value):
    """One entry of a user's session listing."""

    id: str
    created_at: AwareDatetime
    last_activity_at: AwareDatetime
    message_count: int
    pending_approvals: int


class SessionsPage(_Value):
    """A page of :class:`SessionSummary`, newest activity first."""

    sessions: tuple[SessionSummary, ...]
    next_cursor: str | None


class ListedSession(SessionSummary):
    """One entry of the store-wide listing: a summary with the session's owner and
    metadata."""

    user_id: str | None
    metadata: JsonObject = Field(default_factory=dict)
    title: str | None = None


class ListedSessionsPage(_Value):
    """A page of the store-wide listing (:class:`ListedSession`), by session id ascending."""

    sessions: tuple[ListedSession, ...]
    next_cursor: str | None


class MessagePage(_Value):
    """A page of rows and the cursor of the next page (``None`` at the end)."""

    messages: tuple[Message, ...]
    next_cursor: str | None


class PendingApproval(_Value):
    """A tool call waiting for a person's decision."""

    approval_id: Id
    tool_name: str
    tool_call_id: str
    input: JsonValue
    requested_at: AwareDatetime


class Checkpoint(_Value):
    """Runtime state saved at a point of the log (``message_count`` rows)."""

    checkpoint_id: Id
    run_id: Id
    message_count: NonNegative
    state: JsonValue
    created_at: AwareDatetime


class Redaction(_Value):
    """The audit record of one redaction (docs/lifecycle.md, RED-5): which row, by whom,
    when, why, and whether a replacement text took its content's place."""

    index: NonNegative
    row_id: str | None
    role: str
    actor: str | None
    reason: str
    at: AwareDatetime
    replaced: bool
