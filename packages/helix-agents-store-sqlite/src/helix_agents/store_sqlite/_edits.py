"""Pop and replace (MSG-7, MSG-8), each inside one write transaction, in the reference order."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from helix_agents.core import CommitResult, Message
from helix_agents.core.backend import (
    CommitPlan,
    assert_fence,
    check_pop_count,
    check_replace,
    check_replace_state,
    parse_message_json,
    pop_keep,
)

from ._commit import apply_plan, cut_rows, retain, save_row
from ._rows import Clock, load_session

__all__ = ["pop", "replace"]


def pop(
    db: sqlite3.Connection, sid: str, count: int, fence_run_id: str | None, clock: Clock
) -> list[Message]:
    """Remove the newest ``count`` retained rows and return them, oldest first."""
    row = load_session(db, sid)
    check_pop_count(sid, count, fence_run_id)
    assert_fence(sid, fence_run_id, row.current_run)
    keep = pop_keep(count, row.first_index, row.message_count)
    if keep == row.message_count:
        return []
    bodies = db.execute(
        "SELECT body FROM __agents_messages WHERE session_id = ? AND idx >= ? ORDER BY idx",
        (sid, keep),
    ).fetchall()
    cut_rows(db, row, keep)
    save_row(db, row, clock)
    return [parse_message_json(body) for (body,) in bodies]


def replace(
    db: sqlite3.Connection,
    sid: str,
    keep: int,
    messages: Sequence[Any],
    expect_message_count: int,
    fence_run_id: str | None,
    clock: Clock,
    max_messages: int | None,
) -> CommitResult:
    """Cut to ``keep`` rows and append ``messages`` if the log holds the expected count."""
    row = load_session(db, sid)
    rows = check_replace(sid, keep, messages, expect_message_count, fence_run_id)
    check_replace_state(
        sid,
        keep,
        expect_message_count,
        fence_run_id,
        message_count=row.message_count,
        first_index=row.first_index,
        current_run=row.current_run,
    )
    result = CommitResult(first_index=keep, message_count=keep + len(rows))
    apply_plan(db, row, CommitPlan(keep, None, rows, (), (), result), None, clock)
    retain(db, row, max_messages)
    save_row(db, row, clock)
    return result
