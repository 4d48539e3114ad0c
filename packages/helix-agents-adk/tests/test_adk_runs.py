"""HelixPlugin's runs on every backend: ADKF-1 (delivery), ADKF-2/3 (fencing, late answers),
ADKF-6..9 (offload, the context tools, the strategy kept, lazy tool sources). Each reads
around the plugin through the store."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from adk_scripted import APP, USER, call, result_of, run, say, scripted, texts, user
from google.adk.agents import LlmAgent
from helix_backends import BACKENDS, Stores

from helix_agents.adk import STRATEGY_KEY, HelixPlugin, HelixSessionService, session_key
from helix_agents.core import (
    ContextItem,
    ContextMessage,
    RunSupersededError,
    SessionStateStore,
    StoredContextItem,
    ValidationError,
)

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("stores", BACKENDS, indirect=True)]

SID = session_key(APP, USER, "s1")
MEMORY = '<context kind="memory">\nAda prefers tea.\n</context>'


async def _context_rows(store: SessionStateStore) -> list[ContextMessage]:
    return [row for row in await store.get_messages(SID) if isinstance(row, ContextMessage)]


async def test_adkf1_delivered_once_even_when_the_model_call_fails(
    stores: Stores, store: SessionStateStore
) -> None:
    plugin = HelixPlugin(store)
    await plugin.session_service.create_session(app_name=APP, user_id=USER, session_id="s1")
    memory = ContextItem(kind="memory", content="Ada prefers tea.", memory_ids=["m-1"])
    await store.record_context_item(
        SID, StoredContextItem(key="m-1", item=memory, at=datetime.now(UTC))
    )
    # The model call fails after the delivery landed: the answer is lost, the delivery not.
    crashing = scripted(RuntimeError("model down"))
    with pytest.raises(RuntimeError, match="model down"):
        await run(plugin, LlmAgent(name="host", model=crashing), user("A drink?"))
    assert texts(crashing.requests[0]).count(MEMORY) == 1
    assert await store.list_undelivered_context_items(SID) == []
    assert [row.kind for row in await _context_rows(store)] == ["memory"]
    info = await store.get_session(SID)
    assert info is not None and info.current_run is not None
    assert info.current_run.status == "failed"
    # Another process: each later model call shows the row once, from the history.
    async with stores.store("main") as other:
        later = HelixPlugin(other)
        model = scripted(say("Tea."), say("Still tea."))
        agent = LlmAgent(name="host", model=model)
        assert await run(later, agent, user("Again?")) == ["Tea."]
        assert await run(later, agent, user("And now?")) == ["Still tea."]
    assert [texts(r).count(MEMORY) for r in model.requests] == [1, 1]
    assert texts(model.requests[1])[:3] == ["A drink?", MEMORY, "Again?"]
    assert len(await _context_rows(store)) == 1


async def test_adkf2_adkf3_two_runners_one_wins_nothing_lost_or_doubled(
    stores: Stores, store: SessionStateStore
) -> None:
    first = HelixPlugin(store)
    await first.session_service.create_session(app_name=APP, user_id=USER, session_id="s1")
    started, release = asyncio.Event(), asyncio.Event()

    async def slow_search(query: str) -> str:
        """Search (slowly)."""
        started.set()
        await release.wait()
        return f"3 results for {query}"

    slow = LlmAgent(
        name="host",
        model=scripted(call("slow_search", {"query": "tea"}, "c-1")),
        tools=[slow_search],
    )
    running = asyncio.ensure_future(run(first, slow, user("Search")))
    await started.wait()
    async with stores.store("main") as other:  # a second runner, in another process
        second = HelixPlugin(other)
        quick = LlmAgent(name="host", model=scripted(say("Hi!")))
        assert await run(second, quick, user("Hello?")) == ["Hi!"]
    release.set()
    with pytest.raises(RunSupersededError) as refused:
        await running
    assert refused.value.code == "state_run_superseded"
    late = await store.list_undelivered_late_answers(SID)
    assert [(a.call_id, a.tool_name, a.output) for a in late] == [
        ("c-1", "slow_search", {"result": "3 results for tea"})
    ]
    # The log holds each event once: the first run's up to its refusal, the second's whole.
    session = await HelixSessionService(store).get_session(
        app_name=APP, user_id=USER, session_id="s1"
    )
    assert session is not None
    calls = [c.id for e in session.events for c in e.get_function_calls()]
    responses = [r.id for e in session.events for r in e.get_function_responses()]
    shown = [p.text for e in session.events for p in (e.content.parts if e.content else []) or ()]
    assert calls == ["c-1"] and responses == []
    assert [t for t in shown if t] == ["Search", "Hello?", "Hi!"]
    # The next run gets the late answer once, as a notice; the one after, from the history.
    model = scripted(say("Noted."), say("Ok."))
    agent = LlmAgent(name="host", model=model)
    await run(first, agent, user("News?"))
    await run(first, agent, user("More?"))
    notice = "The tool call c-1 (slow_search) answered after its run had ended"
    assert [sum(notice in t for t in texts(r)) for r in model.requests] == [1, 1]
    assert await store.list_undelivered_late_answers(SID) == []
    assert [row.kind for row in await _context_rows(store)] == ["notice"]


def server_log() -> str:
    """The server's log (about 40,000 characters)."""
    return "\n".join(
        "00377 ERROR disk full" if n == 377 else f"{n:05d} ok " + "." * 70 for n in range(500)
    )


async def test_adkf6_to_adkf8_offload_read_back_recall_and_strategy_kept(
    stores: Stores, store: SessionStateStore
) -> None:
    with pytest.raises(ValidationError) as bad:
        HelixPlugin(store, strategy="lazy")  # type: ignore[arg-type]
    assert bad.value.code == "validation_error"
    plugin = HelixPlugin(store, strategy="hybrid")
    await plugin.session_service.create_session(app_name=APP, user_id=USER, session_id="s1")

    def read_back(request: object) -> object:
        summary = str(result_of(request)["result"])  # type: ignore[arg-type]
        assert summary.startswith("[Output stored as out-") and "500 lines" in summary
        assert "00377 ERROR disk full" in summary  # error lines are in the summary
        output_id = "out-" + summary.split("out-", 1)[1].split()[0]
        return call("read_tool_output", {"output_id": output_id, "grep": "ERROR"}, "c-2")

    model = scripted(call("server_log", {}, "c-1"), read_back, say("The disk is full."))  # type: ignore[arg-type]
    agent = LlmAgent(name="ops", model=model, tools=[server_log, *plugin.tools])
    assert await run(plugin, agent, user("What broke?")) == ["The disk is full."]
    assert "378: 00377 ERROR disk full" in result_of(model.requests[2])["result"]
    assert (await store.get_scoped_state("session", SID))[STRATEGY_KEY] == "hybrid"
    # A restart without strategy= keeps the session's; recall_history finds the answer.
    async with stores.store("main") as other:
        later = HelixPlugin(other)
        model = scripted(call("recall_history", {"grep": "disk"}, "c-3"), say("Found it."))
        agent = LlmAgent(name="ops", model=model, tools=[server_log, *later.tools])
        await run(later, agent, user("What did we find?"))
        found = str(result_of(model.requests[1])["result"])
        assert "The disk is full." in found
        # Under static the next output reaches the model whole.
        static = HelixPlugin(other, strategy="static")
        model = scripted(call("server_log", {}, "c-4"), say("Ok."))
        agent = LlmAgent(name="ops", model=model, tools=[server_log])
        await run(static, agent, user("Again?"))
        assert result_of(model.requests[1])["result"] == server_log()
    assert (await store.get_scoped_state("session", SID))[STRATEGY_KEY] == "static"


def restart_service(name: str) -> str:
    """Restart a service."""
    return f"{name} restarted"


async def test_adkf9_dynamic_offers_a_source_once_activated_and_after_a_restart(
    stores: Stores, store: SessionStateStore
) -> None:
    sources = {"ops": [restart_service]}
    plugin = HelixPlugin(store, strategy="dynamic", tool_sources=sources)
    await plugin.session_service.create_session(app_name=APP, user_id=USER, session_id="s1")
    model = scripted(
        call("restart_service", {"name": "db"}, "c-0"),  # not offered yet: ADK refuses it
        call("activate_tool_source", {"source_name": "nope"}, "c-x"),  # no such source
        call("activate_tool_source", {"source_name": "ops"}, "c-1"),
        call("restart_service", {"name": "db"}, "c-2"),
        say("Restarted."),
    )
    agent = LlmAgent(name="ops", model=model, tools=plugin.tools)
    assert await run(plugin, agent, user("Restart db")) == ["Restarted."]
    offered = [sorted(r.tools_dict) for r in model.requests]
    before = ["activate_tool_source", "read_tool_output", "recall_history"]
    after = ["read_tool_output", "recall_history", "restart_service"]
    assert offered == [before, before, before, after, after]
    assert "## Available Tool Sources" in str(model.requests[0].config.system_instruction)
    assert "restart_service" in str(result_of(model.requests[1]))  # refused: not offered
    assert "db restarted" not in str(result_of(model.requests[1]))
    assert "[error context_unknown_tool_source" in result_of(model.requests[2])["result"]
    assert result_of(model.requests[4]) == {"result": "db restarted"}
    assert [(row.kind, row.source) for row in await _context_rows(store)] == [("tools", "ops")]
    # Another process, no strategy given: the session's, and the activation replayed.
    async with stores.store("main") as other:
        later = HelixPlugin(other, tool_sources=sources)
        model = scripted(say("Ok."))
        await run(later, LlmAgent(name="ops", model=model, tools=later.tools), user("Still?"))
    assert sorted(model.requests[0].tools_dict) == [
        "read_tool_output",
        "recall_history",
        "restart_service",
    ]
    assert "Available Tool Sources" not in str(model.requests[0].config.system_instruction)
