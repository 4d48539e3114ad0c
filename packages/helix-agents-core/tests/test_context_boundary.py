"""find_compaction_boundary: safe, maximal, linear — checked against a brute-force oracle."""

from __future__ import annotations

import time
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from helix_agents.core import ChatMessage, ContextMessage, Message
from helix_agents.core.context import find_compaction_boundary, is_protected


def call(*ids: str) -> ChatMessage:
    return ChatMessage(
        role="assistant",
        content=None,
        tool_calls=[
            {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
        ],
    )


def result(call_id: str) -> ChatMessage:
    return ChatMessage(role="tool", content="ok", tool_call_id=call_id)


def user(text: str = "hi") -> ChatMessage:
    return ChatMessage(role="user", content=text)


def skill() -> ContextMessage:
    return ContextMessage(kind="instruction", content="skill body", source="skill")


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """Users, assistant turns with 1..3 parallel calls whose results follow (maybe interleaved
    with other rows), and now and then a protected row."""
    rows: list[Message] = []
    pending: list[str] = []
    counter = 0
    for _ in range(draw(st.integers(0, 25))):
        choice = draw(st.sampled_from(["user", "call", "result", "skill", "pinned"]))
        if choice == "call":
            ids = []
            for _ in range(draw(st.integers(1, 3))):
                counter += 1
                ids.append(f"c{counter}")
            rows.append(call(*ids))
            pending.extend(ids)
        elif choice == "result" and pending:
            rows.append(result(pending.pop(draw(st.integers(0, len(pending) - 1)))))
        elif choice == "skill" and draw(st.booleans()):
            rows.append(skill())
        elif choice == "pinned" and draw(st.booleans()):
            rows.append(ContextMessage(kind="notice", content="pin", metadata={"pinned": True}))
        else:
            rows.append(user())
    return rows


def safe(rows: Sequence[Message], b: int, keep_last: int) -> bool:
    """The oracle: every condition checked directly, with no cleverness."""
    if b < 1 or b > len(rows) - keep_last:
        return False
    if any(is_protected(r) for r in rows[:b]):
        return False
    dropped_calls = {
        c["id"]
        for r in rows[:b]
        if isinstance(r, ChatMessage)
        for c in (r.model_extra or {}).get("tool_calls") or []
    }
    kept_results = {
        (r.model_extra or {}).get("tool_call_id")
        for r in rows[b:]
        if isinstance(r, ChatMessage) and r.role == "tool"
    }
    return not (dropped_calls & kept_results)


@settings(max_examples=400, deadline=None)
@given(conversations(), st.integers(0, 6))
def test_CS_15_boundary_is_safe_and_maximal(rows: list[Message], keep_last: int) -> None:
    found = find_compaction_boundary(rows, keep_last=keep_last)
    best = max((b for b in range(len(rows) + 1) if safe(rows, b, keep_last)), default=0)
    assert found.index == best
    if found.index:
        assert found.reason is None
        kept = rows[found.index :]
        # No orphaned tool result: every kept result's call is kept too (or was never seen).
        kept_calls = {
            c["id"]
            for r in kept
            if isinstance(r, ChatMessage)
            for c in (r.model_extra or {}).get("tool_calls") or []
        }
        all_calls = {
            c["id"]
            for r in rows
            if isinstance(r, ChatMessage)
            for c in (r.model_extra or {}).get("tool_calls") or []
        }
        for r in kept:
            if isinstance(r, ChatMessage) and r.role == "tool":
                cid = (r.model_extra or {}).get("tool_call_id")
                assert cid in kept_calls or cid not in all_calls
        assert sum(map(is_protected, rows)) == sum(map(is_protected, kept))
    else:
        assert found.reason


def test_CS_15_parallel_calls_move_together() -> None:
    rows: list[Message] = [user(), call("a", "b"), result("a"), user(), result("b"), *[user()] * 4]
    # Cuts 2..4 would split the parallel call from a result; the largest safe cut is 5.
    assert find_compaction_boundary(rows, keep_last=4).index == 5
    assert find_compaction_boundary(rows, keep_last=5).index == 1


def test_CS_15_no_boundary_says_why() -> None:
    assert find_compaction_boundary([user()] * 3, keep_last=4).reason
    rows: list[Message] = [skill(), *[user()] * 6]
    found = find_compaction_boundary(rows)
    assert found.index == 0 and found.reason and "protected" in found.reason
    rows = [call("x"), user(), user(), user(), user(), user(), result("x")]
    found = find_compaction_boundary(rows, keep_last=1)
    assert found.index == 0 and found.reason and "tool result" in found.reason


def test_CS_15_linear_time() -> None:
    def timed(n: int) -> float:
        rows: list[Message] = []
        for i in range(n // 3):
            rows += [user(), call(f"c{i}"), result(f"c{i}")]
        start = time.perf_counter()
        assert find_compaction_boundary(rows).index > 0
        return time.perf_counter() - start

    small, large = timed(3_000), timed(30_000)
    # Ten times the rows: roughly ten times the time; a quadratic search would be ~100x.
    assert large < small * 30 + 0.05
