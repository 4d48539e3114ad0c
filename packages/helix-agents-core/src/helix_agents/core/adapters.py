"""How framework adapters share one store (docs/integrations/sharing.md, rules ADP-1..ADP-3).

Each adapter marks the sessions it creates with its name under :data:`ADAPTER_KEY` in
the session's metadata. A session marked by another adapter is not there for reads
(:func:`readable`) and refuses writes (:func:`check_writable`); a session with no mark
(created through the store, or by another runtime) is shared.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from pydantic import JsonValue

from .errors import ForeignSessionError, SessionExistsError, ValidationError
from .inputs import check_id
from .messages import ChatMessage, JsonObject, Message
from .models import ApprovalResolution, Checkpoint, SessionInfo

if TYPE_CHECKING:
    from .protocol import SessionStateStore

__all__ = [
    "ADAPTER_KEY",
    "AdapterName",
    "ApprovalsPendingError",
    "CorruptMessageError",
    "MessageNotStorableError",
    "check_writable",
    "claim_session",
    "corrupt_message",
    "mark",
    "message_text",
    "not_storable",
    "owner_of",
    "paused_run",
    "readable",
    "record_decision",
]

ADAPTER_KEY = "helix.adapter"
"""The metadata key naming the adapter that created a session."""

AdapterName = Literal[
    "openai-agents", "langgraph", "adk", "mcp", "pydantic-ai", "agent-framework", "crewai"
]
"""The adapters that mark sessions."""


def mark(adapter: AdapterName, metadata: JsonObject | None = None) -> JsonObject:
    """``metadata`` with ``adapter``'s mark: what an adapter passes to ``create_session``."""
    return {**(metadata or {}), ADAPTER_KEY: adapter}


def owner_of(info: SessionInfo) -> str | None:
    """The adapter that created the session, or ``None`` for a shared session."""
    owner = info.metadata.get(ADAPTER_KEY)
    return owner if isinstance(owner, str) else None


def readable(info: SessionInfo, adapter: AdapterName) -> bool:
    """Whether ``adapter`` may read the session: it is shared or its own (ADP-2)."""
    owner = owner_of(info)
    return owner is None or owner == adapter


def check_writable(info: SessionInfo, adapter: AdapterName) -> None:
    """Raise :class:`ForeignSessionError` if another adapter created the session (ADP-2)."""
    owner = owner_of(info)
    if owner is not None and owner != adapter:
        raise ForeignSessionError(
            f"session {info.id!r} belongs to the {owner} adapter; the {adapter} adapter "
            "neither reads nor writes it",
            session_id=info.id,
            owner=owner,
            adapter=adapter,
        )


async def claim_session(
    store: SessionStateStore,
    session_id: str,
    adapter: AdapterName,
    *,
    user_id: str | None = None,
    info: SessionInfo | None = None,
) -> SessionInfo | None:
    """The session ``adapter`` may write: ``info`` (or the stored session), else one created
    with ``adapter``'s mark; another writer's create that won the race is checked the same
    way. ``ForeignSessionError`` for another adapter's session (ADP-1, ADP-3); ``None`` if
    a delete took it in between."""
    if info is None:
        info = await store.get_session(session_id)
    if info is None:
        try:
            info = await store.create_session(session_id, user_id=user_id, metadata=mark(adapter))
        except SessionExistsError:
            info = await store.get_session(session_id)
    if info is not None:
        check_writable(info, adapter)
    return info


class MessageNotStorableError(ValidationError):
    """A framework message an adapter refuses before any write, because it would not come
    back equal; ``index`` is its place in the list being saved."""

    def __init__(self, message: str, *, session_id: str | None = None, index: int = 0) -> None:
        super().__init__(message, session_id=session_id)
        self.index = index


class CorruptMessageError(ValidationError):
    """A stored row whose adapter field does not hold the adapter's message; ``row_id``
    names the row."""

    def __init__(
        self, message: str, *, session_id: str | None = None, row_id: str | None = None
    ) -> None:
        super().__init__(message, session_id=session_id)
        self.row_id = row_id


def not_storable(session_id: str, index: int, reason: object) -> MessageNotStorableError:
    """The error for message ``index`` of a save to ``session_id``, refused for ``reason``."""
    return MessageNotStorableError(
        f"session {session_id!r}: message {index} is not storable: {reason}"[:2000],
        session_id=session_id,
        index=index,
    )


def message_text(row: Message, field: str) -> str | None:
    """The JSON text an adapter keeps in ``row``'s provider ``field``; ``None`` for a row
    without the field (one the adapter did not write). ``TypeError`` if the field holds
    anything but text."""
    extra = (row.model_extra or {}) if isinstance(row, ChatMessage) else {}
    if field not in extra:
        return None
    text = extra[field]
    if not isinstance(text, str):
        raise TypeError(f"{field} is {type(text).__name__}, not JSON text")
    return text


def corrupt_message(
    row: Message, session_id: str, framework: str, cause: Exception
) -> CorruptMessageError:
    """The error for ``row`` of ``session_id``, whose field is not a ``framework`` message."""
    row_id = getattr(row, "id", None)
    return CorruptMessageError(
        f"session {session_id!r}: row {row_id!r} is not {framework} message: {cause}",
        session_id=session_id,
        row_id=row_id,
    )


class ApprovalsPendingError(ValidationError):
    """A paused run asked to resume while some of its approvals are undecided;
    ``approval_ids`` names them (code ``validation_error``)."""

    def __init__(
        self, message: str, *, session_id: str | None = None, approval_ids: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message, session_id=session_id)
        self.approval_ids = approval_ids


async def record_decision(
    store: SessionStateStore,
    session_id: str,
    approval_id: str,
    *,
    checkpoint_id: str,
    decision: JsonValue,
) -> ApprovalResolution:
    """Decide ``approval_id`` from any process: ``"resolved"`` for exactly one caller,
    ``"already-resolved"`` for every other.

    The first ``decision`` recorded, in the insert-once checkpoint ``checkpoint_id``, is
    the one a resumed run applies. An adapter's approval id is ``"<run id>:<call id>"``.
    An unknown id is ``ApprovalNotFoundError`` and writes nothing.
    """
    check_id(approval_id, "approval_id", session_id=session_id)
    pending = {a.approval_id for a in await store.list_pending_approvals(session_id)}
    if approval_id not in pending:
        # Resolved before, or unknown (which the store refuses with its typed error).
        return await store.resolve_approval(session_id, approval_id)
    record = Checkpoint(
        checkpoint_id=checkpoint_id,
        run_id=approval_id.split(":", 1)[0],
        message_count=0,
        state=decision,
        created_at=datetime.now(UTC),
    )
    # The insert-once checkpoint decides which caller's decision counts.
    first = (await store.save_checkpoint(session_id, record)).recorded
    await store.resolve_approval(session_id, approval_id)
    return "resolved" if first else "already-resolved"


async def paused_run(
    store: SessionStateStore,
    session_id: str,
    pause_checkpoint_id: Callable[[str], str],
    asked_key: str,
    info: SessionInfo | None = None,
) -> tuple[str, JsonObject]:
    """The run of ``session_id`` paused for approvals, and the state of its pause checkpoint
    (``pause_checkpoint_id(run_id)``), once every approval listed under ``asked_key`` there is
    decided. ``ValidationError`` when no run awaits approvals or it left no pause checkpoint;
    :class:`ApprovalsPendingError` naming the undecided ones. Writes nothing.
    """
    if info is None:
        info = await store.get_session(session_id)
    current = None if info is None else info.current_run
    if current is None or current.status != "awaiting_approval":
        raise ValidationError(
            f"session {session_id!r}: no run awaits approvals "
            f"(current: {None if current is None else current.status!r})",
            session_id=session_id,
        )
    paused = await store.get_checkpoint(session_id, pause_checkpoint_id(current.run_id))
    if paused is None or not isinstance(paused.state, dict):
        raise ValidationError(
            f"session {session_id!r}: run {current.run_id!r} left no pause checkpoint",
            session_id=session_id,
        )
    asked = paused.state.get(asked_key)
    asked = asked if isinstance(asked, list | dict) else []  # approval ids, or keyed by them
    pending = {a.approval_id for a in await store.list_pending_approvals(session_id)}
    undecided = tuple(a for a in asked if isinstance(a, str) and a in pending)
    if undecided:
        raise ApprovalsPendingError(
            f"session {session_id!r}: approvals {list(undecided)!r} are undecided",
            session_id=session_id,
            approval_ids=undecided,
        )
    return current.run_id, paused.state
