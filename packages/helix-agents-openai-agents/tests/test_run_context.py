"""OAI-1..OAI-3: context items, run fencing and late answers through ``HelixRun``."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
from agents import Agent, Runner, function_tool
from agents.testing import ModelStep, ScriptedModel
from run_helpers import answer, call, memory_text, remember, texts

from helix_agents.core import LateAnswer, RunSupersededError, SessionStateStore
from helix_agents.openai_agents import HelixRun, HelixSession

pytestmark = pytest.mark.anyio

SID = "chat"


async def test_OAI_1_context_item_reaches_the_next_model_call_once(
    store: SessionStateStore,
) -> None:
    model = ScriptedModel([answer("noted"), answer("tea")])
    agent = Agent(name="A", model=model)
    async with HelixRun(store, SID, user_id="u") as run:
        await remember(store, SID, "m1", "likes tea")
        await Runner.run(agent, "hi", session=run.session, run_config=run.run_config)
    assert texts(model, 0) == ["hi", memory_text("likes tea")]
    assert await store.list_undelivered_context_items(SID) == []
    rows = await store.get_messages(SID)
    assert [r.role for r in rows] == ["user", "context", "assistant"]
    async with HelixRun(store, SID) as run:
        await Runner.run(agent, "what do I like?", session=run.session, run_config=run.run_config)
    # The next run reads it from the history, in its place: delivered once, shown again.
    assert texts(model, 1) == ["hi", memory_text("likes tea"), "message", "what do I like?"]
    assert await store.get_message_count(SID) == 5


async def test_OAI_1_a_crash_after_the_delivery_does_not_deliver_again(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    crashing = ScriptedModel([ModelStep.raise_error(RuntimeError("the process died"))])

    async def crash() -> None:
        async with HelixRun(store, SID) as run:
            await remember(store, SID, "m1", "likes tea")
            await Runner.run(
                Agent(name="A", model=crashing),
                "hi",
                session=run.session,
                run_config=run.run_config,
            )

    with pytest.raises(RuntimeError):
        await crash()
    info = await store.get_session(SID)
    assert info is not None and info.current_run is not None
    assert info.current_run.status == "failed"
    # The delivery landed with its row before the model call; the crash lost only the answer.
    assert [r.role for r in await store.get_messages(SID)] == ["user", "context"]
    model = ScriptedModel([answer("tea")])
    async with HelixRun(other_store, SID) as run:
        await Runner.run(
            Agent(name="A", model=model), "again", session=run.session, run_config=run.run_config
        )
    assert texts(model, 0).count(memory_text("likes tea")) == 1
    assert [r.role for r in await store.get_messages(SID)].count("context") == 1


async def test_OAI_1_an_item_recorded_mid_run_reaches_the_next_call_in_place(
    store: SessionStateStore,
) -> None:
    @function_tool
    async def look_up(topic: str) -> str:
        """Look ``topic`` up; the app learns something meanwhile."""
        await remember(store, SID, "m2", f"asked about {topic}")
        return "found"

    model = ScriptedModel([call("look_up", {"topic": "tea"}, "c1"), answer("done"), answer("x")])
    agent = Agent(name="A", model=model, tools=[look_up])
    async with HelixRun(store, SID) as run:
        await remember(store, SID, "m1", "likes tea")
        await Runner.run(agent, "hi", session=run.session, run_config=run.run_config)
    seen = memory_text("likes tea"), memory_text("asked about tea")
    assert texts(model, 1) == ["hi", seen[0], "function_call", "function_call_output", seen[1]]
    # What the model saw is what the log holds, in the same order.
    items: list[Any] = await HelixSession(SID, store).get_items()
    assert [i.get("content", i.get("type")) for i in items][:5] == [
        "hi",
        seen[0],
        "function_call",
        "function_call_output",
        seen[1],
    ]


async def test_OAI_2_a_superseded_run_writes_nothing(store: SessionStateStore) -> None:
    old = HelixRun(store, SID)
    await old.__aenter__()
    async with HelixRun(store, SID) as new:
        with pytest.raises(RunSupersededError) as raised:
            await Runner.run(
                Agent(name="A", model=ScriptedModel([answer("late")])),
                "old",
                session=old.session,
                run_config=old.run_config,
            )
        assert raised.value.code == "state_run_superseded"
        await old.__aexit__(RunSupersededError, raised.value, None)
        assert await store.get_message_count(SID) == 0
        await Runner.run(
            Agent(name="A", model=ScriptedModel([answer("ok")])),
            "new",
            session=new.session,
            run_config=new.run_config,
        )
    info = await store.get_session(SID)
    assert info is not None and info.current_run is not None
    assert (info.current_run.run_id, info.current_run.status) == (new.run_id, "completed")
    items: list[Any] = await new.session.get_items()
    assert [i["content"] for i in items][:1] == ["new"]


async def test_OAI_2_OAI_3_two_runners_one_wins_and_the_loser_s_tool_answers_late(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    @function_tool
    async def slow(x: str) -> str:
        """A tool that takes its time."""
        started.set()
        await release.wait()
        return f"slow {x}"

    loser_model = ScriptedModel([call("slow", {"x": "a"}, "call-slow"), answer("never")])

    async def loser() -> None:
        async with HelixRun(store, SID) as run:
            await Runner.run(
                Agent(name="A", model=loser_model, tools=[slow]),
                "first",
                session=run.session,
                run_config=run.run_config,
            )

    task = asyncio.ensure_future(loser())
    await started.wait()
    async with HelixRun(other_store, SID) as run:
        await remember(other_store, SID, "m1", "likes tea")
        winner_model = ScriptedModel([answer("second done")])
        await Runner.run(
            Agent(name="A", model=winner_model),
            "second",
            session=run.session,
            run_config=run.run_config,
        )
    release.set()
    with pytest.raises(RunSupersededError):
        await task
    assert loser_model.remaining_steps == 1  # the loser never called the model again
    late = await store.list_undelivered_late_answers(SID)
    assert [(a.call_id, a.tool_name, a.output) for a in late] == [("call-slow", "slow", "slow a")]
    next_model = ScriptedModel([answer("ok")])
    async with HelixRun(store, SID) as run:
        await Runner.run(
            Agent(name="A", model=next_model),
            "third",
            session=run.session,
            run_config=run.run_config,
        )
    shown = texts(next_model, 0)
    notices = [t for t in shown if "call-slow" in t]
    assert len(notices) == 1 and "slow a" in notices[0]
    assert shown.count(memory_text("likes tea")) == 1
    assert await store.list_undelivered_late_answers(SID) == []
    roles = [r.role for r in await store.get_messages(SID)]
    # "first" (its call and output went with the refused batch); "second", the memory, its
    # answer; "third", the notice, its answer.
    assert roles == ["user", "user", "context", "assistant", "user", "context", "assistant"]


async def test_OAI_3_a_late_answer_recorded_by_the_app_is_a_notice_of_the_next_run(
    store: SessionStateStore,
) -> None:
    async with HelixRun(store, SID) as run:
        await Runner.run(
            Agent(name="A", model=ScriptedModel([answer("a")])),
            "hi",
            session=run.session,
            run_config=run.run_config,
        )
    answer_ = LateAnswer(call_id="c9", tool_name="fetch", output={"ok": True}, at=datetime.now(UTC))
    await store.record_late_answer(SID, answer_)
    model = ScriptedModel([answer("b")])
    async with HelixRun(store, SID) as run:
        await Runner.run(
            Agent(name="A", model=model), "next", session=run.session, run_config=run.run_config
        )
    notice = texts(model, 0)[-1]
    assert notice.startswith('<context kind="notice" source="late_answer">')
    assert "c9 (fetch)" in notice and '{"ok": true}' in notice
