"""Core's rules for records kept in Python containers, on their own (the contract runs them
through the memory store and the example backend)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from helix_agents.core import (
    ApprovalNotFoundError,
    ChatMessage,
    Checkpoint,
    CommitResult,
    PendingApproval,
    RunInfo,
    parse_message,
)
from helix_agents.core.backend import (
    add_approvals_once,
    approvals_in_order,
    checkpoints_in_order,
    cut_records,
    page_rows,
    plan_replace,
    record_once,
    resolve_once,
)

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _checkpoint(cid: str, count: int) -> Checkpoint:
    return Checkpoint(checkpoint_id=cid, run_id="r", message_count=count, state={}, created_at=AT)


def _approval(aid: str, minute: int = 0) -> PendingApproval:
    return PendingApproval(
        approval_id=aid,
        tool_name="t",
        tool_call_id="c",
        input={},
        requested_at=AT.replace(minute=minute),
    )


def test_cut_records_undoes_what_the_cut_rows_left() -> None:
    items: dict[str, tuple[Any, int | None]] = {"a": ("A", 1), "b": ("B", 3), "c": ("C", None)}
    late: dict[str, tuple[Any, int | None]] = {"x": ("X", 2)}
    checkpoints = {"k2": _checkpoint("k2", 2), "k3": _checkpoint("k3", 3)}
    commits = {
        "old": CommitResult(first_index=0, message_count=2),
        "new": CommitResult(first_index=2, message_count=4),
    }
    compactions: list[tuple[int, Any]] = [(1, "s1"), (3, "s2")]
    cut_records(2, (items, late), checkpoints, commits, compactions)
    assert items == {"a": ("A", 1), "b": ("B", None), "c": ("C", None)}
    assert late == {"x": ("X", None)}
    assert list(checkpoints) == ["k2"]
    assert list(commits) == ["old"]
    assert compactions == [(1, "s1")]


def test_record_once_keeps_the_first_value() -> None:
    table: dict[str, int] = {}
    assert record_once(table, "k", 1).recorded
    assert not record_once(table, "k", 2).recorded
    assert table == {"k": 1}


def test_approvals_are_added_once_and_resolved_once() -> None:
    pending: dict[str, PendingApproval] = {}
    resolved: set[str] = set()
    assert add_approvals_once(pending, resolved, [_approval("a"), _approval("a", 5)])
    assert pending["a"].requested_at == AT
    assert resolve_once("s", "a", pending, resolved) == "resolved"
    assert resolve_once("s", "a", pending, resolved) == "already-resolved"
    assert not add_approvals_once(pending, resolved, [_approval("a")])
    assert pending == {}
    with pytest.raises(ApprovalNotFoundError):
        resolve_once("s", "never", pending, resolved)


def test_listing_orders() -> None:
    approvals = [_approval("b", 1), _approval("a", 1), _approval("c", 0)]
    assert [a.approval_id for a in approvals_in_order(approvals)] == ["c", "a", "b"]
    checkpoints = [_checkpoint("b", 1), _checkpoint("a", 1), _checkpoint("z", 0)]
    assert [c.checkpoint_id for c in checkpoints_in_order(checkpoints)] == ["z", "a", "b"]


def test_plan_replace_cuts_to_keep_and_appends() -> None:
    live = RunInfo(run_id="r1", status="live", started_at=AT)
    rows = [ChatMessage(role="user", content="hi")]
    plan = plan_replace("s", 2, rows, 4, "r1", message_count=4, first_index=0, current_run=live)
    assert (plan.rewind_to, plan.run_id, list(plan.rows)) == (2, None, rows)
    assert plan.result == CommitResult(first_index=2, message_count=3)


def test_page_rows_walks_a_list_whose_first_row_is_first_index() -> None:
    rows = [{"role": "user", "content": str(i)} for i in range(3, 8)]
    page = page_rows("s", rows, 3, parse_message, limit=3, cursor=None, order="desc")
    assert [m.content for m in page.messages] == ["7", "6", "5"]
    assert page.next_cursor is not None
    rest = page_rows("s", rows, 3, parse_message, limit=3, cursor=page.next_cursor, order="desc")
    assert [m.content for m in rest.messages] == ["4", "3"]
    assert rest.next_cursor is None
