"""The adapters' edge rules (docs/integrations/sharing.md, ADP-1..ADP-6) kept by HelixSession,
on every backend; ADP-7 is in test_deadlines.py."""

from __future__ import annotations

import json
import pickle
from collections.abc import Awaitable, Callable
from typing import Any, cast

import pytest
from agents import TResponseInputItem
from items_hostile import nested, same

from helix_agents.core import (
    ChatMessage,
    ContextMessage,
    SessionStateStore,
    ValidationError,
    session_handle,
)
from helix_agents.core.adapters import ADAPTER_KEY, mark, owner_of
from helix_agents.core.errors import ForeignSessionError, lookup
from helix_agents.openai_agents import (
    ADAPTER,
    ITEM_FIELD,
    CorruptItemError,
    HelixSession,
    ItemNotJsonError,
)

pytestmark = pytest.mark.anyio

ITEM: dict[str, Any] = {"role": "user", "content": "hi"}


def said(*texts: str) -> list[TResponseInputItem]:
    """User messages with these texts."""
    return [{"role": "user", "content": t} for t in texts]


def item_row(item: Any, row_id: str) -> ChatMessage:
    """A row as HelixSession writes it, written here around the adapter."""
    return ChatMessage(role="user", content=None, id=row_id, **{ITEM_FIELD: json.dumps(item)})


async def rows_of(store: SessionStateStore, sid: str) -> list[Any]:
    return [row.model_dump() for row in await store.get_messages(sid)]


# ADP-1


async def test_adp1_sessions_it_creates_carry_its_mark(store: SessionStateStore) -> None:
    await HelixSession("a", store, user_id="u").add_items(said("x"))
    await HelixSession("b", store)._atomic_replace_items(said("y"))
    for sid in ("a", "b"):
        info = await store.get_session(sid)
        assert info is not None and owner_of(info) == ADAPTER == "openai-agents"
        assert info.metadata == {ADAPTER_KEY: "openai-agents"}


# ADP-2


@pytest.fixture
async def foreign(store: SessionStateStore) -> str:
    """A LangGraph session holding what looks like an SDK item (written through the store)."""
    await store.create_session("f", metadata=mark("langgraph"))
    await session_handle(store, "f").append(item_row(ITEM, "r1"))
    return "f"


async def test_adp2_another_adapters_session_reads_as_missing(
    store: SessionStateStore, foreign: str
) -> None:
    session = HelixSession(foreign, store)
    assert await session.get_items() == []
    assert await session.get_items(limit=1) == []


WRITES: dict[str, Callable[[HelixSession], Awaitable[object]]] = {
    "add_items": lambda s: s.add_items(said("x")),
    "pop_item": lambda s: s.pop_item(),
    "clear_session": lambda s: s.clear_session(),
    "atomic_replace": lambda s: s._atomic_replace_items(said("x")),
    "compaction_snapshot": lambda s: s._get_compaction_snapshot(1),
}


@pytest.mark.parametrize("write", list(WRITES))
async def test_adp2_every_write_to_another_adapters_session_is_refused_writing_nothing(
    store: SessionStateStore, foreign: str, write: str
) -> None:
    before = await rows_of(store, foreign)
    with pytest.raises(ForeignSessionError) as caught:
        await WRITES[write](HelixSession(foreign, store))
    err = caught.value
    assert err.code == "state_foreign_session" and lookup(err.code) is ForeignSessionError
    assert (err.session_id, err.owner, err.adapter) == (foreign, "langgraph", "openai-agents")
    assert await rows_of(store, foreign) == before
    info = await store.get_session(foreign)
    assert info is not None and owner_of(info) == "langgraph"


async def test_adp2_an_unmarked_session_is_shared(store: SessionStateStore) -> None:
    await store.create_session("shared", metadata={"app": "x"})
    await session_handle(store, "shared").append(ChatMessage(role="user", content="app row"))
    session = HelixSession("shared", store)
    await session.add_items(said("a", "b"))
    assert await session.get_items() == said("a", "b")
    assert await session.pop_item() == said("b")[0]
    await session._atomic_replace_items(said("c"))
    assert await HelixSession("shared", store).get_items() == said("c")
    info = await store.get_session("shared")
    assert info is not None and info.metadata == {"app": "x"}  # not marked by a write


# ADP-3


async def test_adp3_rows_it_did_not_write_are_skipped_and_never_break_a_read(
    store: SessionStateStore,
) -> None:
    session = HelixSession("s", store)
    await session.add_items(said("mine"))
    await session_handle(store, "s").append(
        ChatMessage(role="assistant", content=[{"type": "text", "text": "parts"}], id="x"),
        ChatMessage(role="tool", content=None, tool_call_id="t", adk_event={"id": "e"}),
        ContextMessage(kind="instruction", content="be brief"),
        ChatMessage(role="user", content="\x00 app row", openai_items=["near miss"]),
    )
    # A context row is every runtime's: the model sees it lowered to a user turn (OAI-1).
    shown = said('<context kind="instruction">\nbe brief\n</context>')
    assert await HelixSession("s", store).get_items() == said("mine") + shown
    assert await HelixSession("s", store).get_items(limit=1) == []  # a limit counts rows
    assert await HelixSession("s", store)._get_compaction_snapshot(2) is None
    assert await HelixSession("s", store).pop_item() == shown[0]
    assert await HelixSession("s", store).pop_item() == said("mine")[0]
    assert await store.get_message_count("s") == 0


# ADP-4


def _cycle() -> dict[str, Any]:
    looped: dict[str, Any] = {"type": "x"}
    looped["self"] = looped
    return looped


BAD: dict[str, tuple[Any, str]] = {
    "nan": ({"type": "x", "v": float("nan")}, "items[1]['v']"),
    "inf": ({"type": "x", "v": [1, float("-inf")]}, "items[1]['v'][1]"),
    "tuple": ({"role": "user", "content": ("a", "b")}, "items[1]['content']"),
    "int key": ({"type": "x", "m": {1: "one"}}, "items[1]['m']"),
    "none key": ({"type": "x", None: 1}, "items[1]"),
    "set": ({"type": "x", "s": {1, 2}}, "items[1]['s']"),
    "bytes": ({"type": "x", "b": b"\xff"}, "items[1]['b']"),
    "object": ({"role": "user", "content": object()}, "items[1]['content']"),
    "too deep": ({"type": "x", "v": nested(100)}, "items[1]['v']"),
    "big int": ({"type": "x", "n": 10**600}, "items[1]['n']"),
    "cycle": (_cycle(), "items[1]['self']"),
    "not a dict": (["role", "user"], "items[1]"),
    "string": ("hello", "items[1]"),
}


@pytest.mark.parametrize("name", list(BAD))
async def test_adp4_a_bad_item_refuses_the_batch_before_any_write(
    store: SessionStateStore, name: str
) -> None:
    bad, path = BAD[name]
    batch = cast(list[TResponseInputItem], [ITEM, bad])
    # First add: no session is left behind.
    with pytest.raises(ItemNotJsonError) as caught:
        await HelixSession("new", store, user_id="u").add_items(batch)
    err = caught.value
    assert isinstance(err, ValidationError) and isinstance(err, TypeError)
    assert err.code == "validation_error" and err.session_id == "new"
    assert err.path.startswith(path) and "'new'" in str(err) and path in str(err)
    assert await store.get_session("new") is None
    # On a session with rows: nothing of the batch lands, the replacements refuse it too.
    session = HelixSession("s", store)
    await session.add_items(said("kept"))
    snapshot = await session._get_compaction_snapshot(1)
    assert snapshot is not None
    for write in (
        session.add_items(batch),
        session._atomic_replace_items(batch),
        snapshot.replace_suffix(0, batch),
    ):
        with pytest.raises(ItemNotJsonError):
            await write
    assert await HelixSession("s", store).get_items() == said("kept")
    assert await store.get_message_count("s") == 1


async def test_adp4_refusals_pickle_and_a_batch_must_be_a_list(store: SessionStateStore) -> None:
    session = HelixSession("s", store)
    for batch in ("abc", ITEM, 5):
        with pytest.raises(ItemNotJsonError):
            await session.add_items(batch)  # type: ignore[arg-type]
    with pytest.raises(ItemNotJsonError) as caught:
        await session.add_items([cast(Any, {"type": "x", "v": float("nan")})])
    again = pickle.loads(pickle.dumps(caught.value))
    assert type(again) is ItemNotJsonError and again.path == caught.value.path
    with pytest.raises(ValidationError):
        await session.get_items(limit="3")  # type: ignore[arg-type]
    assert await store.get_session("s") is None


# ADP-5


async def test_adp5_values_at_the_edges_come_back_exactly(store: SessionStateStore) -> None:
    items: list[Any] = [
        {"role": "user", "content": "lone \ud800 and \udfff, NUL \x00, \u2028"},
        {"z": 1, "a": 2, "type": "x", "\udc80key": "\x00"},
        {"type": "x", "n": [10**600 - 1, -(10**600) + 1, 2**63, -0.0, 5e-324, 1e308, 1, 1.0]},
        {"type": "x", "v": nested(99)},  # 100 deep with the item itself: the limit
        {"role": "assistant", "content": [{"type": "output_text", "text": "\ud83d"}]},
    ]
    await HelixSession("s", store).add_items(items)
    back = await HelixSession("s", store).get_items()
    assert same(back, items)
    assert [await HelixSession("s", store).pop_item() for _ in items] == items[::-1]


# ADP-6

CORRUPT: dict[str, Any] = {
    "not json": "{not json",
    "truncated": '{"role": "user", "content": "hi"',
    "a list": "[1, 2]",
    "a string": '"text"',
    "nan": '{"type": "x", "v": NaN}',
    "too deep": "[" * 100_000 + "]" * 100_000,
    "huge int": '{"n": ' + "9" * 5000 + "}",
    "not text": {"role": "user"},
}


@pytest.mark.parametrize("name", list(CORRUPT))
async def test_adp6_a_corrupt_row_raises_a_typed_error_naming_session_and_row(
    store: SessionStateStore, name: str
) -> None:
    session = HelixSession("s", store)
    await session.add_items(said("fine"))
    await session_handle(store, "s").append(
        ChatMessage(role="user", content=None, id="bad-row", **{ITEM_FIELD: CORRUPT[name]})
    )
    calls: dict[str, Callable[[], Awaitable[object]]] = {
        "get_items": lambda: HelixSession("s", store).get_items(),
        "get_items(limit)": lambda: HelixSession("s", store).get_items(limit=1),
        "snapshot": lambda: HelixSession("s", store)._get_compaction_snapshot(2),
        "pop_item": lambda: HelixSession("s", store).pop_item(),
    }
    for call in calls.values():
        with pytest.raises(CorruptItemError) as caught:
            await call()
        err = caught.value
        assert isinstance(err, ValidationError) and err.code == "validation_error"
        assert (err.session_id, err.row_id) == ("s", "bad-row")
        assert "'s'" in str(err) and "'bad-row'" in str(err)
    # The pop took the corrupt row (its error says which); the items before it stay.
    assert await HelixSession("s", store).get_items() == said("fine")
