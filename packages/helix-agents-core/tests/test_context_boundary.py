"""find_compaction_boundary: safe, maximal, linear — checked against a brute-force oracle."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helix_agents.core import ChatMessage, ContextMessage, Message
from helix_agents.core.context import boundary as boundary_module
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


def nested(n: int) -> tuple[list[Message], int]:
    """The worst case for a search that tries cuts one by one or marks each call's span: n/2
    calls, then their results in reverse order, all kept; every span covers every cut but 1."""
    half = n // 2
    rows: list[Message] = [user()]
    rows += [call(f"c{i}") for i in range(half)]
    rows += [result(f"c{i}") for i in reversed(range(half))]
    return rows, half


def adjacent(n: int) -> tuple[list[Message], int]:
    """The common case: turns of a question, one call and its result."""
    rows: list[Message] = []
    for i in range(n // 3):
        rows += [user(), call(f"c{i}"), result(f"c{i}")]
    return rows, 4


def lines_run(rows: Sequence[Message], keep_last: int) -> int:
    """Lines of Python executed in the boundary module (its generators included): a count of
    the work done, which the machine's load cannot change."""
    count = 0

    def in_module(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        count += event == "line"
        return in_module

    def on_call(frame: FrameType, event: str, arg: object) -> Any:
        return in_module if frame.f_code.co_filename == boundary_module.__file__ else None

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        find_compaction_boundary(rows, keep_last=keep_last)
    finally:
        sys.settrace(previous)
    return count


def cpu_time(rows: Sequence[Message], keep_last: int) -> float:
    """This thread's CPU time for one search: time spent waiting for a core is not counted."""
    start = time.thread_time()
    find_compaction_boundary(rows, keep_last=keep_last)
    return time.thread_time() - start


@pytest.mark.parametrize("shape", [nested, adjacent])
def test_CS_15_linear_time(shape: Callable[[int], tuple[list[Message], int]]) -> None:
    small, large = shape(1_000), shape(10_000)
    if shape is nested:  # only the first cut is safe: a search from the top tries them all
        assert find_compaction_boundary(large[0], keep_last=large[1]).index == 1
    # Ten times the rows: ten times the work, where a quadratic search does ~100 times.
    assert 9 < lines_run(*large) / lines_run(*small) < 11
    # Work done in C (slicing, list.index) is not counted above, so CPU time too: the best of
    # five interleaved runs of each size, compared as a ratio with a wide margin.
    best_small = best_large = math.inf
    for _ in range(5):
        best_small = min(best_small, cpu_time(*small))
        best_large = min(best_large, cpu_time(*large))
    assert best_large < best_small * 30
