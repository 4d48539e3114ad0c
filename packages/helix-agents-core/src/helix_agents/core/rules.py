"""The rules every store shares: the commit pre-checks and the queue rules.

Backends read the state they need inside their own atomic step, hand it to
these functions, and write only what the returned plan says. That way the
order of checks (docs/commit.md) and each rule live in one place.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

import pydantic

from .errors import (
    ContextItemDeliveryConflictError,
    LateAnswerDeliveryConflictError,
    MessageCountConflictError,
    RunSupersededError,
    ValidationError,
    session_not_found,
)
from .inputs import check_id, check_json, check_record, storable_rows_json
from .messages import JsonObject, Message, describe
from .models import (
    Checkpoint,
    CommitResult,
    LateAnswer,
    MessageCommit,
    PendingApproval,
    RunInfo,
    RunStatus,
    StoredContextItem,
)
from .scoped import check_scoped_deltas, merge_deltas
from .sessiondoc import refuse_reserved

__all__ = [
    "CommitPlan",
    "CommitState",
    "assert_deliverable",
    "assert_delivery_offsets",
    "assert_fence",
    "assert_retained",
    "approvals_in_order",
    "check_checkpoint_count",
    "check_commit",
    "check_finish_status",
    "check_keep",
    "check_limit",
    "check_new_session",
    "checkpoints_in_order",
    "coerce",
    "coerce_all",
    "coerce_commit",
    "commit_survives",
    "new_session_id",
    "next_activity",
    "reopen_on_truncate",
    "undelivered_in_order",
]

FINISH_STATUSES: frozenset[RunStatus] = frozenset(
    {"completed", "failed", "cancelled", "awaiting_approval"}
)
_T = TypeVar("_T")
_M = TypeVar("_M", bound=pydantic.BaseModel)
_DELIVERY_ERRORS: dict[
    str, type[ContextItemDeliveryConflictError] | type[LateAnswerDeliveryConflictError]
] = {
    "context item": ContextItemDeliveryConflictError,
    "late answer": LateAnswerDeliveryConflictError,
}
"""The refusal of a bad delivery, by what it delivers."""
_metadata: pydantic.TypeAdapter[JsonObject] = pydantic.TypeAdapter(JsonObject)


@dataclass(frozen=True, slots=True)
class CommitState:
    """What the pre-checks need to know about a session, read inside the commit's atomic step.

    ``context_items`` and ``late_answers`` map each key the commit names (at
    least) to the index of the row that delivered it, or ``None`` while it is
    queued; a key the session lacks is simply absent.
    """

    message_count: int
    current_run: RunInfo | None
    run_id_used: Callable[[str], bool]
    context_items: Mapping[str, int | None]
    late_answers: Mapping[str, int | None]
    replay: CommitResult | None = None


@dataclass(frozen=True, slots=True)
class CommitPlan:
    """What a commit writes, in one atomic step, once every check passed."""

    rewind_to: int | None
    run_id: str | None
    rows: Sequence[Message]
    context_deliveries: Sequence[tuple[str, int]]
    late_deliveries: Sequence[tuple[str, int]]
    result: CommitResult
    # (scope, owner) -> keys to set, folded from the commit's deltas (docs/scoped-state.md).
    scoped_state: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)


def coerce(model: type[_M], value: Any, session_id: str | None = None) -> _M:
    """``value`` as an instance of ``model``, checked storable (:func:`check_record`).

    A mapping is validated first; anything else is refused.
    """
    if isinstance(value, model):
        return check_record(value, session_id)
    try:
        checked = model.model_validate(value)
    except pydantic.ValidationError as exc:
        raise ValidationError(
            f"session {session_id!r}: invalid {model.__name__}: {describe(exc)}",
            session_id=session_id,
        ) from None
    return check_record(checked, session_id)


def coerce_commit(
    value: Any, session_id: str | None = None
) -> tuple[MessageCommit, list[str] | None]:
    """``coerce(MessageCommit, value, session_id)``, and its rows' JSON
    (``dump_message_json`` of each) when one walk could judge and write them, else ``None``."""
    if type(value) is MessageCommit:
        texts = storable_rows_json(value)
        if texts is not None:
            return value, texts
    return coerce(MessageCommit, value, session_id), None


def coerce_all(
    model: type[_M], values: Any, session_id: str | None = None, field: str = "values"
) -> list[_M]:
    """Each of ``values`` (a sequence, not a string) through :func:`coerce`; else refused."""
    if not isinstance(values, Sequence) or isinstance(values, (str, bytes)):
        raise ValidationError(
            f"session {session_id!r}: {field} must be a list of {model.__name__}, "
            f"got {type(values).__name__}",
            session_id=session_id,
        )
    return [coerce(model, value, session_id) for value in values]


def check_commit(
    session_id: str, commit: MessageCommit, state: CommitState | None
) -> CommitPlan | CommitResult:
    """Run the pre-checks of a commit in order; the first failure wins.

    Returns the recorded result (``replayed=True``) for a commit id that
    already landed, else the plan to write.
    """
    if state is None:
        raise session_not_found(session_id)
    if commit.commit_id is not None and state.replay is not None:
        return state.replay.model_copy(update={"replayed": True})

    # Most commits deliver nothing; their delivery checks would only loop over nothing.
    delivers = bool(commit.deliver_context_items or commit.deliver_late_answers)
    if delivers:
        assert_delivery_offsets(session_id, commit)
    check_scoped_deltas(session_id, commit.scoped_state)
    start = commit.start_run
    if start is not None:
        if start.rewind_to is not None and start.rewind_to > state.message_count:
            raise ValidationError(
                f"session {session_id!r}: rewind_to {start.rewind_to} is outside "
                f"0..{state.message_count}",
                session_id=session_id,
            )
        if commit.fence_run_id is not None:
            raise ValidationError(
                f"session {session_id!r}: a commit cannot both start run {start.run_id!r} "
                f"and fence run {commit.fence_run_id!r}",
                session_id=session_id,
            )
        if state.run_id_used(start.run_id):
            raise ValidationError(
                f"session {session_id!r}: run id {start.run_id!r} was already used",
                session_id=session_id,
            )

    assert_fence(session_id, commit.fence_run_id, state.current_run)

    expected = commit.expect_message_count
    if start is None and expected is not None and expected != state.message_count:
        raise MessageCountConflictError(
            f"session {session_id!r}: expected {expected} rows, found {state.message_count}",
            session_id=session_id,
            expected=expected,
            actual=state.message_count,
        )

    base = state.message_count
    if start is not None and start.rewind_to is not None:
        base = start.rewind_to
    reopened_from = None if start is None else start.rewind_to
    context = [(d.key, d.row_offset) for d in commit.deliver_context_items]
    late = [(d.call_id, d.row_offset) for d in commit.deliver_late_answers]
    if delivers:
        for what, named, queued in (
            ("context item", context, state.context_items),
            ("late answer", late, state.late_answers),
        ):
            keys = [key for key, _ in named]
            error = _DELIVERY_ERRORS[what]
            assert_deliverable(
                session_id, keys, queued, reopened_from=reopened_from, error=error, what=what
            )
    return CommitPlan(
        rewind_to=None if start is None else start.rewind_to,
        run_id=None if start is None else start.run_id,
        rows=commit.messages,
        context_deliveries=[(key, base + offset) for key, offset in context],
        late_deliveries=[(key, base + offset) for key, offset in late],
        result=CommitResult(first_index=base, message_count=base + len(commit.messages)),
        scoped_state=merge_deltas(session_id, commit.scoped_state),
    )


def assert_delivery_offsets(session_id: str, commit: MessageCommit) -> None:
    """Every delivery's ``row_offset`` names one of the commit's rows (CI-7, LA-7)."""
    n = len(commit.messages)
    offsets = [(d.key, d.row_offset) for d in commit.deliver_context_items]
    offsets += [(d.call_id, d.row_offset) for d in commit.deliver_late_answers]
    for key, offset in offsets:
        if not 0 <= offset < n:
            bounds = f"0..{n - 1}" if n else "none: the commit has no rows"
            raise ValidationError(
                f"session {session_id!r}: delivery of {key!r} names row_offset {offset}, "
                f"outside the commit's rows ({bounds})",
                session_id=session_id,
            )


def assert_fence(session_id: str, fence_run_id: str | None, current_run: RunInfo | None) -> None:
    """A fenced write lands only while ``fence_run_id`` (an id) is the current, live run."""
    if fence_run_id is None:
        return
    check_id(fence_run_id, "fence_run_id", session_id=session_id)
    if current_run is None or current_run.run_id != fence_run_id or current_run.status != "live":
        now = (
            "no run"
            if current_run is None
            else (f"run {current_run.run_id!r} ({current_run.status})")
        )
        raise RunSupersededError(
            f"session {session_id!r}: run {fence_run_id!r} is not the current live run "
            f"(current: {now})",
            session_id=session_id,
        )


def assert_deliverable(
    session_id: str,
    keys: Sequence[str],
    delivered_at: Mapping[str, int | None],
    *,
    reopened_from: int | None,
    error: type[ContextItemDeliveryConflictError] | type[LateAnswerDeliveryConflictError],
    what: str,
) -> None:
    """Each key is queued, not yet delivered, and named once (CI-8, LA-8).

    An item delivered at an index the commit's rewind removes counts as queued.
    """
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            raise error(
                f"session {session_id!r}: {what} {key!r} is named twice in one commit",
                session_id=session_id,
            )
        seen.add(key)
        if key not in delivered_at:
            raise error(
                f"session {session_id!r}: {what} {key!r} is not queued", session_id=session_id
            )
        index = delivered_at[key]
        if index is not None and (reopened_from is None or index < reopened_from):
            raise error(
                f"session {session_id!r}: {what} {key!r} was already delivered at row {index}",
                session_id=session_id,
            )


def reopen_on_truncate(delivered_at: Mapping[str, int | None], keep: int) -> list[str]:
    """Keys whose delivering row a truncate (or rewind) to ``keep`` rows removes (CI-6)."""
    return [key for key, index in delivered_at.items() if index is not None and index >= keep]


def commit_survives(result: CommitResult, keep: int) -> bool:
    """Whether a landed commit's id is still remembered after truncating to ``keep`` (IDEM-2)."""
    return result.message_count <= keep


def undelivered_in_order(
    entries: Iterable[tuple[_T, int | None]],
) -> list[_T]:
    """The queued records of ``(record, delivered_at)`` pairs, by ``at`` then key (CI-4)."""
    queued = [record for record, index in entries if index is None]
    return sorted(queued, key=_queue_order)


def approvals_in_order(approvals: Iterable[PendingApproval]) -> list[PendingApproval]:
    """Pending approvals in listing order: by ``requested_at``, then id (APR-1)."""
    return sorted(approvals, key=lambda a: (a.requested_at, a.approval_id))


def checkpoints_in_order(checkpoints: Iterable[Checkpoint]) -> list[Checkpoint]:
    """Checkpoints in listing order: by ``message_count``, then ``created_at``, then id;
    the last one is the latest (CKP-1)."""
    return sorted(checkpoints, key=lambda c: (c.message_count, c.created_at, c.checkpoint_id))


def _queue_order(record: Any) -> tuple[datetime, str]:
    if isinstance(record, StoredContextItem):
        return (record.at, record.key)
    if isinstance(record, LateAnswer):
        return (record.at, record.call_id)
    raise TypeError(f"not a queued record: {type(record).__name__}")


def check_limit(session_id: str | None, name: str, value: int, low: int, high: int) -> None:
    """``value`` lies in ``low..high``, else :class:`ValidationError`."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        where = "" if session_id is None else f"session {session_id!r}: "
        raise ValidationError(
            f"{where}{name} {value!r} is outside {low}..{high}", session_id=session_id
        )


def check_keep(session_id: str, keep: int, message_count: int) -> None:
    """A truncate keeps ``0..message_count`` rows."""
    check_limit(session_id, "keep", keep, 0, message_count)


def check_finish_status(session_id: str, status: str) -> None:
    """A run ends as completed, failed, cancelled or awaiting_approval."""
    if not isinstance(status, str) or status not in FINISH_STATUSES:
        raise ValidationError(
            f"session {session_id!r}: {status!r} is not a finished run status "
            f"({', '.join(sorted(FINISH_STATUSES))})",
            session_id=session_id,
        )


def assert_retained(session_id: str, keep: int, first_index: int, message_count: int) -> None:
    """A truncate, rewind or clone cannot cut below the first row retention kept (MSG-5)."""
    if keep < first_index:
        raise ValidationError(
            f"session {session_id!r}: rows below {first_index} were dropped by retention; "
            f"keep must be in {first_index}..{message_count}",
            session_id=session_id,
        )


def check_checkpoint_count(
    session_id: str, checkpoint_id: str, checkpoint_count: int, message_count: int
) -> None:
    """A checkpoint cannot point past the session's rows (CKP-2)."""
    if checkpoint_count > message_count:
        raise ValidationError(
            f"session {session_id!r}: checkpoint {checkpoint_id!r} has message_count "
            f"{checkpoint_count}, above the session's {message_count}",
            session_id=session_id,
        )


def new_session_id(session_id: str | None, field: str = "session_id") -> str:
    """``session_id``, or a fresh unique id; anything but a storable id is refused."""
    if session_id is None:
        return uuid.uuid4().hex
    return check_id(session_id, field)


def check_new_session(
    session_id: str | None, user_id: str | None, metadata: JsonObject | None
) -> tuple[str, JsonObject]:
    """The id (minted when ``None``) and metadata of a session to create, validated."""
    sid = new_session_id(session_id)
    check_id(user_id, "user_id", session_id=sid, optional=True)
    if metadata is not None and not isinstance(metadata, dict):
        raise ValidationError(
            f"session {sid!r}: metadata must be a JSON object, got {type(metadata).__name__}",
            session_id=sid,
        )
    check_json(metadata, "metadata", session_id=sid)
    refuse_reserved(sid, metadata or {}, "metadata")
    # A copy, so that a caller changing its dict later changes nothing stored.
    return sid, _metadata.validate_python(metadata or {})


def next_activity(previous: datetime | None, now: datetime) -> datetime:
    """The activity time of a write: ``now``, but always after ``previous`` (SES-7)."""
    if previous is not None and now <= previous:
        return previous + timedelta(microseconds=1)
    return now
