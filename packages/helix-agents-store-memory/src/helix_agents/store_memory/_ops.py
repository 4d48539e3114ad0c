"""Writes on one session's data, done while its lock is held."""

from __future__ import annotations

import copy
from datetime import datetime

from helix_agents.core import MessageCommit, RunInfo, dump_message
from helix_agents.core.backend import (
    CommitPlan,
    CommitState,
    assert_retained,
    cut_records,
)

from ._state import MemoryData, SessionData

__all__ = ["apply_plan", "commit_state", "cut_rows", "retain"]


def commit_state(session: SessionData, commit: MessageCommit) -> CommitState:
    """What the shared pre-checks need, read from ``session``: only the keys the commit names."""
    items = {
        d.key: session.items[d.key][1]
        for d in commit.deliver_context_items
        if d.key in session.items
    }
    late = {
        d.call_id: session.late[d.call_id][1]
        for d in commit.deliver_late_answers
        if d.call_id in session.late
    }
    return CommitState(
        message_count=session.message_count,
        current_run=session.current_run,
        run_id_used=session.run_ids.__contains__,
        context_items=items,
        late_answers=late,
        replay=None if commit.commit_id is None else session.commits.get(commit.commit_id),
    )


def cut_rows(session: SessionData, keep: int) -> None:
    """Drop rows at index >= ``keep`` and everything that hung on them (MSG-4, CI-6, IDEM-2)."""
    assert_retained(session.id, keep, session.first_index, session.message_count)
    cut = keep - session.first_index
    del session.rows[cut:]
    del session.context_flags[cut:]
    queues = (session.items, session.late)
    cut_records(keep, queues, session.checkpoints, session.commits, session.context.compactions)


def apply_plan(
    data: MemoryData, session: SessionData, plan: CommitPlan, commit_id: str | None, now: datetime
) -> None:
    """Write a checked commit: rewind, run start, rows, deliveries, scoped state, commit id."""
    if plan.rewind_to is not None:
        cut_rows(session, plan.rewind_to)
    if plan.run_id is not None:
        session.current_run = RunInfo(run_id=plan.run_id, status="live", started_at=now)
        session.run_ids.add(plan.run_id)
    for row in plan.rows:
        session.rows.append(dump_message(row))
        session.context_flags.append(row.role == "context")
    for key, index in plan.context_deliveries:
        session.items[key] = (session.items[key][0], index)
    for key, index in plan.late_deliveries:
        session.late[key] = (session.late[key][0], index)
    for (scope, owner), changes in plan.scoped_state.items():
        fresh = copy.deepcopy(dict(changes))
        if scope == "session":
            session.scoped.update(fresh)
            continue
        with data.scoped_lock:
            data.scoped.setdefault((scope, owner), {}).update(fresh)
    if commit_id is not None:
        session.commits[commit_id] = plan.result


def retain(session: SessionData, max_messages: int | None) -> None:
    """Keep the newest ``max_messages`` rows; indexes stay absolute (MSG-5)."""
    if max_messages is None or len(session.rows) <= max_messages:
        return
    drop = len(session.rows) - max_messages
    if session.context.preserved:
        # CS-9: once history is preserved, retention archives rows instead of dropping them.
        first = session.first_index
        session.context.archive.extend((first + i, session.rows[i]) for i in range(drop))
    session.dropped_ui += sum(not flag for flag in session.context_flags[:drop])
    del session.rows[:drop]
    del session.context_flags[:drop]
    session.first_index += drop
