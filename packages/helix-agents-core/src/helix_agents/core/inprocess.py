"""The rules of a store that keeps a session's records in Python containers.

The memory store and the example backend (docs/backends/writing.md) hold a
session as dicts and lists in this process; these helpers apply core's rules
to those containers, so that each rule is written once. A store on a database
applies the same rules in its own queries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableMapping, MutableSet, Sequence
from typing import Any, TypeVar

from .context.models import OutputRef
from .errors import approval_not_found
from .limits import check_page_args, next_page_cursor, page_window
from .messages import Message
from .models import (
    ApprovalResolution,
    Checkpoint,
    CommitResult,
    MessagePage,
    PageOrder,
    PendingApproval,
    RecordResult,
)
from .rules import commit_survives, reopen_on_truncate

__all__ = [
    "add_approvals_once",
    "cut_records",
    "keep_output",
    "page_rows",
    "record_once",
    "replayed_output",
    "resolve_once",
]

_R = TypeVar("_R")
_Row = TypeVar("_Row")


def cut_records(
    keep: int,
    queues: Iterable[MutableMapping[str, tuple[Any, int | None]]],
    checkpoints: MutableMapping[str, Checkpoint],
    commits: MutableMapping[str, CommitResult],
    compactions: list[tuple[int, Any]],
) -> None:
    """Undo, in place, what rows at index >= ``keep`` left behind (MSG-4).

    Queue entries those rows delivered are queued again (CI-6); checkpoints
    past ``keep`` go, and so do commit ids that no longer survive (IDEM-2) and
    compactions whose boundary is past the cut (CS-11). The rows are the
    caller's to drop.
    """
    for queue in queues:
        for key in reopen_on_truncate({k: index for k, (_, index) in queue.items()}, keep):
            queue[key] = (queue[key][0], None)
    for cid in [cid for cid, cp in checkpoints.items() if cp.message_count > keep]:
        del checkpoints[cid]
    for cid in [cid for cid, result in commits.items() if not commit_survives(result, keep)]:
        del commits[cid]
    compactions[:] = [c for c in compactions if c[0] <= keep]


def record_once(table: MutableMapping[str, _R], key: str, value: _R) -> RecordResult:
    """Store ``value`` under ``key`` unless the key is known: a repeat records nothing."""
    if key in table:
        return RecordResult(recorded=False)
    table[key] = value
    return RecordResult(recorded=True)


def add_approvals_once(
    pending: MutableMapping[str, PendingApproval],
    resolved: MutableSet[str],
    approvals: Iterable[PendingApproval],
) -> bool:
    """Add each approval whose id is neither pending nor resolved; whether any was added."""
    added = False
    for approval in approvals:
        if approval.approval_id not in pending and approval.approval_id not in resolved:
            pending[approval.approval_id] = approval
            added = True
    return added


def resolve_once(
    session_id: str,
    approval_id: str,
    pending: MutableMapping[str, PendingApproval],
    resolved: MutableSet[str],
) -> ApprovalResolution:
    """Move a pending approval to ``resolved``: ``"resolved"`` for exactly one caller,
    ``"already-resolved"`` for the rest; an id never added is refused."""
    if approval_id in resolved:
        return "already-resolved"
    if pending.pop(approval_id, None) is None:
        raise approval_not_found(session_id, approval_id)
    resolved.add(approval_id)
    return "resolved"


def replayed_output(
    outputs: Mapping[str, tuple[OutputRef, str]],
    keys: Mapping[str, str],
    key: str | None,
) -> OutputRef | None:
    """The first reference stored under ``key``, marked replayed; ``None`` if there is none."""
    if key is None or key not in keys:
        return None
    first, _ = outputs[keys[key]]
    return first.model_copy(update={"replayed": True})


def keep_output(
    outputs: MutableMapping[str, tuple[OutputRef, str]],
    keys: MutableMapping[str, str],
    ref: OutputRef,
    content: str,
) -> None:
    """Store a new output, and its ``key`` (if any) for :func:`replayed_output`."""
    outputs[ref.output_id] = (ref, content)
    if ref.key is not None:
        keys[ref.key] = ref.output_id


def page_rows(
    session_id: str,
    rows: Sequence[_Row],
    first_index: int,
    parse: Callable[[_Row], Message],
    *,
    limit: int,
    cursor: str | None,
    order: PageOrder,
) -> MessagePage:
    """A page of ``page_messages`` over the stored rows in a list, ``rows[0]`` being row
    ``first_index``: the arguments checked, each row parsed with ``parse`` (MSG-3)."""
    start = check_page_args(session_id, limit, cursor, order)
    count = first_index + len(rows)
    lo, hi = page_window(order, start, limit, first_index, count)
    indexes = range(lo, hi) if order == "asc" else range(hi - 1, lo - 1, -1)
    page = tuple(parse(rows[i - first_index]) for i in indexes)
    next_cursor = next_page_cursor(session_id, order, lo, hi, first_index, count)
    return MessagePage(messages=page, next_cursor=next_cursor)
