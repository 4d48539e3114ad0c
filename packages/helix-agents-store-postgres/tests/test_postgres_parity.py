"""Refusals the server-side functions decide, compared one by one with the memory store.

The SQL functions mirror core's rules; these cases go beyond the contract's
(retention below a rewind or a truncate, bad input on a missing session, two
refusals at once) and check that both stores refuse with the same class and
message, and that the drift guard speaks up when the SQL and core disagree.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from helix_agents.contract._helpers import item
from helix_agents.core import (
    ChatMessage,
    ContextItemDelivery,
    MessageCommit,
    StartRun,
    StateStoreError,
)
from helix_agents.store_memory import MemoryStateStore
from helix_agents.store_postgres._refusals import RefusalDoc, refuse

pytestmark = pytest.mark.anyio

Op = Callable[[Any], Awaitable[object]]


def _rows(*texts: str) -> tuple[ChatMessage, ...]:
    return tuple(ChatMessage(role="user", content=t) for t in texts)


async def _setup(store: Any) -> None:
    """Session ``s``: 5 rows with retention 2 (first index 3), run r1 live, item k delivered."""
    await store.create_session("s", user_id="u")
    await store.record_context_item("s", item("k"))
    await store.append_messages(
        "s",
        MessageCommit(
            messages=_rows("a", "b", "c", "d", "e"),
            start_run=StartRun(run_id="r1"),
            deliver_context_items=(ContextItemDelivery(key="k", row_offset=4),),
        ),
    )


def _restart(rewind_to: int, *, deliver: str | None = None) -> Op:
    """Append one row starting run ``r2`` at ``rewind_to``, delivering item ``deliver`` with it."""
    deliveries = () if deliver is None else (ContextItemDelivery(key=deliver, row_offset=0),)
    return lambda s: s.append_messages(
        "s",
        MessageCommit(
            messages=_rows("x"),
            start_run=StartRun(run_id="r2", rewind_to=rewind_to),
            deliver_context_items=deliveries,
        ),
    )


CASES: dict[str, Op] = {
    "rewind below retention": _restart(1),
    "rewind at retention re-opens the item": _restart(3, deliver="k"),
    "delivery conflict wins over retention": _restart(1, deliver="nope"),
    "bad offset wins over fence": lambda s: s.append_messages(
        "s",
        MessageCommit(
            messages=_rows("x"),
            fence_run_id="r9",
            deliver_context_items=(ContextItemDelivery(key="k", row_offset=3),),
        ),
    ),
    "reused run id": lambda s: s.append_messages(
        "s", MessageCommit(start_run=StartRun(run_id="r1"))
    ),
    "fence wins over count": lambda s: s.append_messages(
        "s", MessageCommit(fence_run_id="r9", expect_message_count=0)
    ),
    "truncate below retention": lambda s: s.truncate_messages("s", 2),
    "truncate fence wins over retention": lambda s: s.truncate_messages("s", 2, fence_run_id="r9"),
    "truncate beyond count": lambda s: s.truncate_messages("s", 6),
    "clone below retention": lambda s: s.clone_session("s", "t", up_to=2),
    "clone onto itself": lambda s: s.clone_session("s", "s"),
    "finish with a bad status": lambda s: s.finish_run("s", "r9", "done"),
    "checkpoint above count": lambda s: s.save_checkpoint(
        "s",
        {
            "checkpoint_id": "c",
            "run_id": "r1",
            "message_count": 6,
            "state": None,
            "created_at": "2026-01-01T00:00:00Z",
        },
        fence_run_id="r9",
    ),
    "resolve unknown approval": lambda s: s.resolve_approval("s", "a"),
    "pop fenced by another run": lambda s: s.pop_messages("s", fence_run_id="r9"),
    "pop past retention removes the retained rows": lambda s: s.pop_messages("s", 5),
    "bad pop count on a missing session": lambda s: s.pop_messages("missing", 0),
    "bad pop count on a present session": lambda s: s.pop_messages("s", 501),
    "replace fence wins over count": lambda s: s.replace_messages(
        "s", 3, _rows("x"), expect_message_count=0, fence_run_id="r9"
    ),
    "replace with a stale count": lambda s: s.replace_messages(
        "s", 3, _rows("x"), expect_message_count=4
    ),
    "replace below retention": lambda s: s.replace_messages(
        "s", 2, _rows("x"), expect_message_count=5
    ),
    "bad keep wins over a stale count": lambda s: s.replace_messages(
        "s", 6, [], expect_message_count=4
    ),
    "bad replace on a missing session": lambda s: s.replace_messages(
        "missing", 6, [], expect_message_count=5
    ),
    "bad replace row": lambda s: s.replace_messages(
        "s", 5, [{"role": "robot"}], expect_message_count=5
    ),
    "bad commit on a missing session": lambda s: s.append_messages(
        "missing",
        {"messages": [{"role": "robot"}]},
    ),
    "bad limit on a missing session": lambda s: s.get_messages("missing", limit=-1),
    "bad page on a missing session": lambda s: s.page_messages("missing", order="up"),
    "bad keep on a missing session": lambda s: s.truncate_messages("missing", "2"),
    "bad target on a missing session": lambda s: s.clone_session("missing", ""),
    "bad target on a present session": lambda s: s.clone_session("s", ""),
    "bad record on a present session": lambda s: s.record_late_answer("s", {"call_id": 1}),
}


async def _outcome(store: Any, op: Op) -> tuple[str, str]:
    try:
        result = await op(store)
    except StateStoreError as exc:
        return type(exc).__name__, str(exc)
    return "ok", type(result).__name__


@pytest.mark.parametrize("case", list(CASES))
async def test_refusal_matches_the_memory_store(open_store: Any, case: str) -> None:
    """Same error class and message as the reference store, or the same success."""
    reference = MemoryStateStore(max_messages=2)
    await _setup(reference)
    expected = await _outcome(reference, CASES[case])
    async with open_store(max_messages=2) as store:
        await _setup(store)
        assert await _outcome(store, CASES[case]) == expected


def test_drift_between_the_sql_and_core_is_reported() -> None:
    """A refusal that core's checks do not reproduce raises a plain StateStoreError."""
    doc: RefusalDoc = {
        "refused": "count_conflict",
        "message_count": 3,
        "first_index": 0,
        "run": None,
    }
    with pytest.raises(StateStoreError) as caught:
        refuse("s", doc, lambda snap: None)
    assert type(caught.value) is StateStoreError
    assert "drifted" in str(caught.value)
