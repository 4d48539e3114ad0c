"""The rules of the two log edits beside the commit: pop the newest rows, replace a suffix.

Both are a truncate (MSG-4's side effects) made safe against other writers:
``pop_messages`` reads and cuts in one atomic step (MSG-7), and
``replace_messages`` cuts and appends in one step, only if the log still has
the length the caller read (MSG-8), archiving the rows it cuts when asked
(CS-19). Backends call these checks in their own atomic step; the server
backends mirror them and replay them on a refusal.
"""

from __future__ import annotations

import reprlib
from collections.abc import Sequence
from typing import Any

from .errors import MessageCountConflictError, ValidationError
from .inputs import check_id, check_record
from .messages import Message, parse_message
from .models import CommitResult, RunInfo
from .rules import CommitPlan, assert_fence, assert_retained, check_limit

__all__ = [
    "MAX_POP",
    "archived_by_replace",
    "check_pop_count",
    "check_replace",
    "check_replace_state",
    "check_rows",
    "plan_replace",
    "pop_keep",
]

MAX_POP = 500
"""The most rows one ``pop_messages`` call removes."""


def check_pop_count(session_id: str, count: int, fence_run_id: str | None = None) -> None:
    """A pop asks for ``1..MAX_POP`` rows, fenced by a storable run id (MSG-7)."""
    check_id(fence_run_id, "fence_run_id", session_id=session_id, optional=True)
    check_limit(session_id, "count", count, 1, MAX_POP)


def pop_keep(count: int, first_index: int, message_count: int) -> int:
    """The row count a pop of ``count`` leaves: it removes only rows retention kept (MSG-7)."""
    return message_count - min(count, message_count - first_index)


def check_replace(
    session_id: str,
    keep: int,
    messages: Sequence[Any],
    expect_message_count: int,
    fence_run_id: str | None = None,
    archive: bool = False,
) -> list[Message]:
    """The checks of a replace that need no state, in order; returns the parsed rows (MSG-8).

    ``expect_message_count`` is a row count and ``keep`` lies in
    ``0..expect_message_count``: judged against what the caller read, so a log
    that moved since is a conflict (retryable), never a malformed call.
    """
    check_id(fence_run_id, "fence_run_id", session_id=session_id, optional=True)
    if not isinstance(archive, bool):
        raise ValidationError(
            f"session {session_id!r}: archive must be a bool, got {reprlib.repr(archive)}",
            session_id=session_id,
        )
    check_limit(session_id, "expect_message_count", expect_message_count, 0, 2**62)
    check_limit(session_id, "keep", keep, 0, expect_message_count)
    return check_rows(session_id, messages)


def check_rows(session_id: str, messages: Sequence[Any]) -> list[Message]:
    """Each row (a :data:`Message` or its JSON object) parsed and checked storable
    (docs/limits.md); a bad one names its offset."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise ValidationError(
            f"session {session_id!r}: messages must be a sequence of rows, "
            f"got {type(messages).__name__}",
            session_id=session_id,
        )
    rows: list[Message] = []
    for offset, row in enumerate(messages):
        try:
            parsed = parse_message(row)
        except ValidationError as exc:
            raise ValidationError(
                f"session {session_id!r}: row {offset}: {exc.message}", session_id=session_id
            ) from None
        rows.append(check_record(parsed, session_id, f"messages[{offset}]"))
    return rows


def check_replace_state(
    session_id: str,
    keep: int,
    expect_message_count: int,
    fence_run_id: str | None,
    *,
    message_count: int,
    first_index: int,
    current_run: RunInfo | None,
) -> None:
    """The checks of a replace against the session, in order: fence, count, retention (MSG-8)."""
    assert_fence(session_id, fence_run_id, current_run)
    if expect_message_count != message_count:
        raise MessageCountConflictError(
            f"session {session_id!r}: expected {expect_message_count} rows, found {message_count}",
            session_id=session_id,
            expected=expect_message_count,
            actual=message_count,
        )
    assert_retained(session_id, keep, first_index, message_count)


def plan_replace(
    session_id: str,
    keep: int,
    messages: Sequence[Any],
    expect_message_count: int,
    fence_run_id: str | None,
    *,
    message_count: int,
    first_index: int,
    current_run: RunInfo | None,
    archive: bool = False,
) -> CommitPlan:
    """Every check of a replace, in order (:func:`check_replace`, then
    :func:`check_replace_state`), and the plan to write: cut to ``keep`` rows,
    then append the parsed rows (MSG-8). Call it inside the atomic step."""
    rows = check_replace(session_id, keep, messages, expect_message_count, fence_run_id, archive)
    check_replace_state(
        session_id,
        keep,
        expect_message_count,
        fence_run_id,
        message_count=message_count,
        first_index=first_index,
        current_run=current_run,
    )
    result = CommitResult(first_index=keep, message_count=keep + len(rows))
    return CommitPlan(keep, None, rows, (), (), result)


def archived_by_replace(
    keep: int, cut: Sequence[Message], rows: Sequence[Message]
) -> list[tuple[int, Message]]:
    """What an archiving replace puts into the archive (CS-19): the ``cut`` rows (those at
    ``keep`` and after, in order) with their index, but those ``rows`` carry again (a
    non-``None`` row ``id`` among them)."""
    carried = {row_id for row in rows if (row_id := getattr(row, "id", None)) is not None}
    return [
        (keep + offset, row)
        for offset, row in enumerate(cut)
        if getattr(row, "id", None) not in carried
    ]
