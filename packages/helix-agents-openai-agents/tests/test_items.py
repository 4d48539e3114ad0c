"""Every item type comes back exactly as given, in a row whose role means something."""

from __future__ import annotations

import json
import typing
from typing import Any, cast

import pytest
from agents.items import TResponseInputItem
from items_catalogue import ITEMS, ROW_ROLES

from helix_agents.core import ChatMessage, SessionStateStore, ValidationError, session_handle
from helix_agents.openai_agents import ITEM_FIELD, HelixSession, ItemNotJsonError, row_role

pytestmark = pytest.mark.anyio


def _sdk_item_types() -> set[str]:
    """The ``type`` literal of each TypedDict in the SDK's ``TResponseInputItem`` union."""
    found: set[str] = set()
    for member in typing.get_args(TResponseInputItem):
        hints = typing.get_type_hints(member)
        kind = hints["type"]
        while typing.get_origin(kind) is not typing.Literal:
            kind = next(a for a in typing.get_args(kind) if a is not type(None))
        found.update(typing.get_args(kind))
    return found


def test_catalogue_covers_every_sdk_item_type() -> None:
    types = {item.get("type", "message") for item in ITEMS.values()}
    assert _sdk_item_types() <= types


def test_row_roles() -> None:
    for name, item in ITEMS.items():
        assert row_role(item) == ROW_ROLES.get(name, "assistant"), name


async def test_every_item_round_trips_exactly(store: SessionStateStore) -> None:
    items = cast(list[TResponseInputItem], list(ITEMS.values()))
    await HelixSession("s", store).add_items(items)
    # A new instance: what comes back is what the store kept, not a cache.
    back = await HelixSession("s", store).get_items()
    assert back == items
    # Key order and value types too: the JSON texts are identical.
    assert [json.dumps(i) for i in back] == [json.dumps(i) for i in items]
    popped = [await HelixSession("s", store).pop_item() for _ in items]
    assert popped == items[::-1]


async def test_rows_carry_role_and_text(store: SessionStateStore) -> None:
    names = ["message/user-parts", "function_call", "function_call_output", "message/developer"]
    await HelixSession("s", store).add_items([cast(Any, ITEMS[n]) for n in names])
    rows = await store.get_messages("s")
    assert [r.role for r in rows] == ["user", "assistant", "tool", "system"]
    assert [r.content for r in rows] == ["look at this", None, None, None]
    assert all(isinstance(r, ChatMessage) and ITEM_FIELD in (r.model_extra or {}) for r in rows)
    assert len({r.id for r in rows if isinstance(r, ChatMessage)}) == len(rows)
    assert await store.get_ui_message_count("s") == len(names)


@pytest.mark.parametrize(
    "bad",
    [{"role": "user", "content": object()}, {"type": "x", "n": float("nan"), "o": {1, 2}}, ["x"]],
)
async def test_an_item_json_cannot_hold_is_refused_and_nothing_written(
    store: SessionStateStore, bad: Any
) -> None:
    session = HelixSession("s", store)
    await session.add_items([{"role": "user", "content": "kept"}])
    with pytest.raises(ItemNotJsonError) as caught:
        await session.add_items([{"role": "user", "content": "not kept"}, bad])
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, ValidationError)
    assert caught.value.code == "validation_error" and caught.value.session_id == "s"
    assert await session.get_items() == [{"role": "user", "content": "kept"}]


async def test_rows_of_another_runtime_are_not_items(store: SessionStateStore) -> None:
    session = HelixSession("s", store)
    await session.add_items([{"role": "user", "content": "mine"}])
    await session_handle(store, "s").append(ChatMessage(role="assistant", content="theirs"))
    assert await session.get_items() == [{"role": "user", "content": "mine"}]
    # pop_item passes over (and removes) the foreign row to reach the newest item.
    assert await session.pop_item() == {"role": "user", "content": "mine"}
    assert await store.get_message_count("s") == 0
