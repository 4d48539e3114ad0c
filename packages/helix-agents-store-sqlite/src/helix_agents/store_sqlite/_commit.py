"""The commit (docs/commit.md) and the cuts it shares with truncate, inside one write transaction.

Each function here runs on the connection's thread with the write lock held
(``BEGIN IMMEDIATE``): it reads what core's rules need, lets
:func:`helix_agents.core.check_commit` decide, and writes the plan it returns.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from helix_agents.core import CommitResult, Message, MessageCommit, ValidationError
from helix_agents.core.backend import (
    CommitPlan,
    CommitState,
    assert_fence,
    assert_retained,
    check_commit,
    coerce_commit,
    commit_survives,
    dump_message_json,
    next_activity,
    reopen_on_truncate,
)
from helix_agents.core.models import RunInfo

from . import _scoped
from ._context import archive_before, forget_compactions
from ._rows import Clock, SessionRow, from_us, load_session, to_us

__all__ = ["apply_plan", "commit", "cut_rows", "retain", "save_row"]

_QUEUES = (("__agents_context_items", "item_key"), ("__agents_late_answers", "call_id"))
# A plain append's check and session update in one statement: the activity time is
# ``next_activity`` in integer microseconds, max(now, previous + 1). No RETURNING:
# it costs more than a second statement (an UPDATE 7 µs against 16 with RETURNING).
_PLAIN = (
    "UPDATE __agents_sessions SET message_count = message_count + ?, "
    "ui_count = ui_count + ?, last_activity_us = max(?, last_activity_us + 1) "
    "WHERE session_id = ?"
)
_PLAIN_EXPECTED = _PLAIN + " AND message_count = ?"
_UPDATED = (
    "SELECT message_count, first_index, current_run FROM __agents_sessions WHERE session_id = ?"
)
_INSERT_ROWS = (
    "INSERT INTO __agents_messages (session_id, idx, is_context, body) VALUES (?, ?, ?, ?)"
)


def commit(
    db: sqlite3.Connection, session_id: str, raw: Any, clock: Clock, max_messages: int | None
) -> CommitResult:
    """Check and land one commit; the caller's transaction makes it all-or-nothing."""
    try:
        checked, texts = coerce_commit(raw, session_id)
    except ValidationError:
        load_session(db, session_id)  # a missing session is named first
        raise
    if (
        checked.start_run is None
        and checked.commit_id is None
        and not checked.deliver_context_items
        and not checked.deliver_late_answers
        and not checked.scoped_state
    ):
        landed = _plain(db, session_id, checked, texts, clock, max_messages)
        if landed is not None:
            return landed
    row = load_session(db, session_id)
    outcome = check_commit(session_id, checked, _state(db, row, checked))
    if isinstance(outcome, CommitResult):
        return outcome
    apply_plan(db, row, outcome, checked.commit_id, clock)
    retain(db, row, max_messages)
    save_row(db, row, clock)
    return outcome.result


def _plain(
    db: sqlite3.Connection,
    sid: str,
    commit: MessageCommit,
    texts: Sequence[str] | None,
    clock: Clock,
    max_messages: int | None,
) -> CommitResult | None:
    """A plain append (rows, maybe a fence and an expected count): the session row is
    checked and updated by one ``UPDATE`` (and read back when the rows' place, the run
    or retention needs it), then the rows go in.

    ``None`` when no row matched (no such session, or another count): nothing was
    written, and the full path names the refusal in core's order.
    """
    rows = commit.messages
    n = len(rows)
    ui = _ui_rows(rows)
    now = to_us(clock())
    expected = commit.expect_message_count
    if expected is None:
        updated = db.execute(_PLAIN, (n, ui, now, sid))
    else:
        updated = db.execute(_PLAIN_EXPECTED, (n, ui, now, sid, expected))
    if updated.rowcount != 1:
        return None
    if expected is not None and commit.fence_run_id is None and max_messages is None:
        # The matched count says where the rows go; there is no run to fence or row to drop.
        _insert_rows(db, sid, expected, rows, texts)
        return CommitResult(first_index=expected, message_count=expected + n)
    count, first, run_json = db.execute(_UPDATED, (sid,)).fetchone()
    if commit.fence_run_id is not None:
        # Raising rolls the transaction back, the session update with it.
        run = None if run_json is None else RunInfo.model_validate_json(run_json)
        assert_fence(sid, commit.fence_run_id, run)
    base = count - n
    _insert_rows(db, sid, base, rows, texts)
    kept = _retained(db, sid, count, first, max_messages)
    if kept != first:
        db.execute("UPDATE __agents_sessions SET first_index = ? WHERE session_id = ?", (kept, sid))
    return CommitResult(first_index=base, message_count=count)


def _insert_rows(
    db: sqlite3.Connection,
    sid: str,
    base: int,
    rows: Sequence[Message],
    texts: Sequence[str] | None = None,
) -> None:
    """Insert ``rows`` at indexes ``base``, ``base + 1``, …; ``texts`` is their JSON if known."""
    if texts is None:
        texts = [dump_message_json(message, sid) for message in rows]
    if rows:
        db.executemany(
            _INSERT_ROWS,
            [
                (sid, base + i, message.role == "context", text)
                for i, (message, text) in enumerate(zip(rows, texts, strict=True))
            ],
        )


def _ui_rows(rows: Sequence[Message]) -> int:
    """How many of ``rows`` the user sees (all but ``context`` rows)."""
    return sum(message.role != "context" for message in rows)


def save_row(db: sqlite3.Connection, row: SessionRow, clock: Clock) -> None:
    """Write back ``row``'s counters and run, and move its activity time forward (SES-7)."""
    # The activity time comes from a clock read after the writes, as in the reference store.
    row.last_activity_us = to_us(next_activity(from_us(row.last_activity_us), clock()))
    db.execute(
        "UPDATE __agents_sessions SET message_count = ?, first_index = ?, ui_count = ?, "
        "current_run = ?, last_activity_us = ? WHERE session_id = ?",
        (
            row.message_count,
            row.first_index,
            row.ui_count,
            row.run_json,
            row.last_activity_us,
            row.id,
        ),
    )


def _state(db: sqlite3.Connection, row: SessionRow, commit: MessageCommit) -> CommitState:
    """What ``check_commit`` needs, read only for the keys and ids the commit names."""
    sid = row.id
    if commit.commit_id is not None:
        found = db.execute(
            "SELECT first_index, message_count FROM __agents_commits "
            "WHERE session_id = ? AND commit_id = ?",
            (sid, commit.commit_id),
        ).fetchone()
        if found is not None:
            replay = CommitResult(first_index=found[0], message_count=found[1])
            return CommitState(
                row.message_count, row.current_run, lambda _run_id: False, {}, {}, replay
            )
    used = False
    if commit.start_run is not None:
        used = (
            db.execute(
                "SELECT 1 FROM __agents_runs WHERE session_id = ? AND run_id = ?",
                (sid, commit.start_run.run_id),
            ).fetchone()
            is not None
        )
    return CommitState(
        message_count=row.message_count,
        current_run=row.current_run,
        run_id_used=lambda _run_id: used,
        context_items=_delivered_at(
            db, _QUEUES[0], sid, [d.key for d in commit.deliver_context_items]
        ),
        late_answers=_delivered_at(
            db, _QUEUES[1], sid, [d.call_id for d in commit.deliver_late_answers]
        ),
    )


def _delivered_at(
    db: sqlite3.Connection, queue: tuple[str, str], sid: str, keys: Sequence[str]
) -> dict[str, int | None]:
    if not keys:
        return {}
    table, column = queue
    marks = ", ".join("?" * len(set(keys)))
    found = db.execute(
        f"SELECT {column}, delivered_index FROM {table} "
        f"WHERE session_id = ? AND {column} IN ({marks})",
        (sid, *set(keys)),
    ).fetchall()
    return dict(found)


def apply_plan(
    db: sqlite3.Connection,
    row: SessionRow,
    plan: CommitPlan,
    commit_id: str | None,
    clock: Clock,
) -> None:
    """Write a checked plan: rewind, run start, rows, deliveries, scoped state, commit id."""
    sid = row.id
    now = clock()
    if plan.rewind_to is not None:
        cut_rows(db, row, plan.rewind_to)
    if plan.run_id is not None:
        row.current_run = RunInfo(run_id=plan.run_id, status="live", started_at=now)
        db.execute(
            "INSERT INTO __agents_runs (session_id, run_id) VALUES (?, ?)", (sid, plan.run_id)
        )
    _insert_rows(db, sid, row.message_count, plan.rows)
    row.message_count += len(plan.rows)
    row.ui_count += _ui_rows(plan.rows)
    for (table, column), deliveries in zip(
        _QUEUES, (plan.context_deliveries, plan.late_deliveries), strict=True
    ):
        if deliveries:
            db.executemany(
                f"UPDATE {table} SET delivered_index = ? WHERE session_id = ? AND {column} = ?",
                [(index, sid, key) for key, index in deliveries],
            )
    if plan.scoped_state:
        _scoped.apply(db, plan.scoped_state)
    if commit_id is not None:
        db.execute(
            "INSERT INTO __agents_commits (session_id, commit_id, first_index, message_count) "
            "VALUES (?, ?, ?, ?)",
            (sid, commit_id, plan.result.first_index, plan.result.message_count),
        )


def cut_rows(db: sqlite3.Connection, row: SessionRow, keep: int) -> None:
    """Drop rows at index >= ``keep`` and what hung on them (MSG-4, CI-6, IDEM-2).

    Updates ``row``'s counters; the caller writes them back.
    """
    sid = row.id
    assert_retained(sid, keep, row.first_index, row.message_count)
    removed_ui = db.execute(
        "SELECT count(*) FROM __agents_messages "
        "WHERE session_id = ? AND idx >= ? AND is_context = 0",
        (sid, keep),
    ).fetchone()[0]
    db.execute("DELETE FROM __agents_messages WHERE session_id = ? AND idx >= ?", (sid, keep))
    for table, column in _QUEUES:
        # Candidates come from the index (rows at or past ``keep``); core decides which reopen.
        delivered = dict(
            db.execute(
                f"SELECT {column}, delivered_index FROM {table} "
                f"WHERE session_id = ? AND delivered_index >= ?",
                (sid, keep),
            ).fetchall()
        )
        db.executemany(
            f"UPDATE {table} SET delivered_index = NULL WHERE session_id = ? AND {column} = ?",
            [(sid, key) for key in reopen_on_truncate(delivered, keep)],
        )
    forget_compactions(db, row, keep)
    db.execute(
        "DELETE FROM __agents_checkpoints WHERE session_id = ? AND message_count > ?", (sid, keep)
    )
    landed = db.execute(
        "SELECT commit_id, first_index, message_count FROM __agents_commits "
        "WHERE session_id = ? AND message_count > ?",
        (sid, keep),
    ).fetchall()
    db.executemany(
        "DELETE FROM __agents_commits WHERE session_id = ? AND commit_id = ?",
        [
            (sid, commit_id)
            for commit_id, first, count in landed
            if not commit_survives(CommitResult(first_index=first, message_count=count), keep)
        ],
    )
    row.message_count = keep
    row.ui_count -= removed_ui


def retain(db: sqlite3.Connection, row: SessionRow, max_messages: int | None) -> None:
    """Keep the newest ``max_messages`` rows; indexes and the UI count stay absolute (MSG-5)."""
    row.first_index = _retained(db, row.id, row.message_count, row.first_index, max_messages)


def _retained(
    db: sqlite3.Connection, sid: str, count: int, first: int, max_messages: int | None
) -> int:
    """:func:`retain` on a session's counts; the first index kept."""
    if max_messages is None or count - first <= max_messages:
        return first
    first = count - max_messages
    archive_before(db, sid, first)
    db.execute("DELETE FROM __agents_messages WHERE session_id = ? AND idx < ?", (sid, first))
    return first
