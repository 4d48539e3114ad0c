"""HelixSession's Session semantics, on every backend."""

from __future__ import annotations

from typing import Any, cast

import pytest
from agents import Agent, RunContextWrapper, Runner, SessionSettings, TResponseInputItem
from agents.memory import Session
from agents.memory.session import _session_accepts_wrapper
from agents.testing import ScriptedModel, assistant_message

from helix_agents.core import SessionStateStore, ValidationError
from helix_agents.openai_agents import HelixSession

pytestmark = pytest.mark.anyio


def said(*texts: str) -> list[TResponseInputItem]:
    """User messages with these texts."""
    return [{"role": "user", "content": t} for t in texts]


async def test_is_a_session_that_takes_the_run_context(store: SessionStateStore) -> None:
    session = HelixSession("s", store)
    assert isinstance(session, Session)
    assert _session_accepts_wrapper(session)


async def test_get_items_oldest_first_and_limits(store: SessionStateStore) -> None:
    session = HelixSession("s", store)
    await session.add_items(said("a", "b"))
    await session.add_items(said("c", "d"))
    assert await session.get_items() == said("a", "b", "c", "d")
    assert await session.get_items(limit=2) == said("c", "d")
    assert await session.get_items(limit=1) == said("d")
    assert await session.get_items(limit=9) == said("a", "b", "c", "d")
    assert await session.get_items(limit=0) == []
    # A negative limit is no limit, as in the SDK's SQLiteSession (docs).
    assert await session.get_items(limit=-1) == said("a", "b", "c", "d")
    assert await session.get_items(limit=2_147_483_647) == said("a", "b", "c", "d")


async def test_explicit_limit_beats_session_settings(store: SessionStateStore) -> None:
    session = HelixSession("s", store, session_settings=SessionSettings(limit=1))
    await session.add_items(said("a", "b", "c"))
    assert await session.get_items() == said("c")
    assert await session.get_items(limit=2) == said("b", "c")
    assert await session.get_items(limit=0) == []
    assert await HelixSession("s", store, session_settings={"limit": 0}).get_items() == []


async def test_unknown_session_reads_empty_and_empty_add_writes_nothing(
    store: SessionStateStore,
) -> None:
    session = HelixSession("nobody", store)
    assert await session.get_items() == []
    assert await session.pop_item() is None
    await session.clear_session()
    await session.add_items([])
    assert await store.get_session("nobody") is None


async def test_add_items_creates_the_session_for_its_user(store: SessionStateStore) -> None:
    await HelixSession("s", store, user_id="u1").add_items(said("hi"))
    info = await store.get_session("s")
    assert info is not None and info.user_id == "u1" and info.message_count == 1
    listing = await store.list_sessions("u1")
    assert [(s.id, s.message_count) for s in listing.sessions] == [("s", 1)]


async def test_concurrent_creation_is_fine(store: SessionStateStore, other_store: Any) -> None:
    first, second = HelixSession("s", store), HelixSession("s", other_store)
    import anyio

    async with anyio.create_task_group() as tg:
        tg.start_soon(first.add_items, said("a"))
        tg.start_soon(second.add_items, said("b"))
    assert sorted(i["content"] for i in cast(Any, await first.get_items())) == ["a", "b"]


async def test_user_id_hook_takes_the_user_from_the_run_context(
    store: SessionStateStore,
) -> None:
    def owner(wrapper: RunContextWrapper[Any]) -> str | None:
        return cast(str, wrapper.context["user"])

    session = HelixSession("s", store, user_id=owner)
    agent = Agent(name="a", model=ScriptedModel([[assistant_message("hello")]]))
    result = await Runner.run(agent, "hi", session=session, context={"user": "u7"})
    assert result.final_output == "hello"
    info = await store.get_session("s")
    assert info is not None and info.user_id == "u7"
    items = await session.get_items()
    assert items[0] == {"role": "user", "content": "hi"} and len(items) == 2


async def test_a_hook_without_a_run_context_names_no_user(store: SessionStateStore) -> None:
    session = HelixSession("s", store, user_id=lambda wrapper: "never")
    await session.add_items(said("a"))
    info = await store.get_session("s")
    assert info is not None and info.user_id is None


async def test_bad_ids_are_refused(store: SessionStateStore) -> None:
    with pytest.raises(ValidationError):
        HelixSession("", store)
    with pytest.raises(ValidationError):
        HelixSession("s", store, user_id="x" * 600)
    session = HelixSession("s", store, user_id=lambda wrapper: "")
    with pytest.raises(ValidationError):
        await session.add_items(said("a"), wrapper=RunContextWrapper(context=None))
    assert await store.get_session("s") is None


async def test_pop_item_returns_newest_then_none(store: SessionStateStore) -> None:
    session = HelixSession("s", store)
    await session.add_items(said("a", "b"))
    assert await session.pop_item() == said("b")[0]
    assert await session.pop_item() == said("a")[0]
    assert await session.pop_item() is None
    await session.add_items(said("c"))
    assert await session.get_items() == said("c")


async def test_clear_session_keeps_the_session(store: SessionStateStore) -> None:
    session = HelixSession("s", store, user_id="u1")
    await session.add_items(said("a", "b"))
    await session.clear_session()
    assert await session.get_items() == []
    info = await store.get_session("s")
    assert info is not None and info.user_id == "u1" and info.message_count == 0
    await session.add_items(said("c"))
    assert await HelixSession("s", store).get_items() == said("c")


async def test_close_ends_the_session_and_leaves_the_store_open(store: SessionStateStore) -> None:
    session = HelixSession("s", store)
    await session.add_items(said("a"))
    snapshot = await session._get_compaction_snapshot(1)
    assert snapshot is not None
    assert session.close() is None  # type: ignore[func-returns-value]
    session.close()  # idempotent
    calls = [
        session.get_items(),
        session.get_items(limit=0),
        session.add_items(said("b")),
        session.add_items([]),
        session.pop_item(),
        session.clear_session(),
        session._atomic_replace_items(said("c")),
        session._get_compaction_snapshot(1),
        snapshot.replace_suffix(0, said("c")),
    ]
    for call in calls:
        with pytest.raises(RuntimeError, match=r"^HelixSession is closed$"):
            await call
    # The store and the session's rows are untouched: another HelixSession goes on.
    other = HelixSession("s", store)
    assert await other.get_items() == said("a")
    await other.add_items(said("d"))
    assert await store.get_message_count("s") == 2


async def test_runner_turns_with_a_tool_persist_every_item(store: SessionStateStore) -> None:
    from agents import function_tool
    from agents.testing import function_call

    @function_tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    model = ScriptedModel(
        [
            [function_call("add", {"a": 2, "b": 3}, call_id="c1")],
            [assistant_message("5")],
            [assistant_message("again")],
        ]
    )
    agent = Agent(name="calc", model=model, tools=[add])
    session = HelixSession("s", store)
    assert (await Runner.run(agent, "2+3?", session=session)).final_output == "5"
    assert (await Runner.run(agent, "more", session=session)).final_output == "again"
    items = cast(list[dict[str, Any]], await HelixSession("s", store).get_items())
    kinds = [i.get("type", "message") for i in items]
    assert kinds == ["message", "function_call", "function_call_output", "message"] * 1 + [
        "message",
        "message",
    ]
    rows = await store.get_messages("s")
    assert [r.role for r in rows] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
