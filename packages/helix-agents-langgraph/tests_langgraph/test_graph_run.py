"""LGF-1..LGF-12: ``HelixGraphRun`` on a real graph, on each of the four backends.

Delivery survives a crash exactly once, two runners on one thread leave one winner and
nothing lost or doubled, a late tool answer reaches the next run, two concurrent answers to
one interrupt resolve it once, and the strategies offload, archive and disclose.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from helix_fixtures import other_store, store, stores
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt
from pydantic import Field

from helix_agents.core import (
    ContextItem,
    ContextMessage,
    RunSupersededError,
    SessionStateStore,
    StoredContextItem,
    ValidationError,
)
from helix_agents.langgraph import (
    CONTEXT_TOOLS,
    ApprovalsPendingError,
    HelixCheckpointSaver,
    HelixGraphRun,
    StaleCheckpointError,
    decide_approval,
    helix_context,
    helix_run,
)

__all__ = ["other_store", "store", "stores"]  # the shared fixtures, on four backends

pytestmark = pytest.mark.anyio

THREAD = "thread"
MEMORY = '<context kind="memory">\nAda prefers tea.\n</context>'


class Scripted(BaseChatModel):
    """Answers from ``replies`` in order (an exception is raised, a function is asked with
    the messages); records what it saw and the names of the tools it was offered."""

    replies: list[Any]
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    offers: list[list[str]] = Field(default_factory=list)
    offered: list[str] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.model_copy(update={"offered": sorted(t.name for t in tools)})

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        self.offers.append(self.offered)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if callable(reply):
            reply = reply(messages)
        return ChatResult(generations=[ChatGeneration(message=reply)])


@tool
def delete_file(path: str) -> str:
    """Delete ``path`` once a person approved it."""
    answer = interrupt({"tool": "delete_file", "path": path})
    return f"deleted {path}" if answer["approve"] else f"kept {path}"


def graph(store: SessionStateStore, model: Scripted) -> Any:
    """context -> agent (-> tools -> context ...) on the helix saver."""

    async def agent(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("context", helix_context)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([delete_file]))
    builder.add_edge(START, "context")
    builder.add_edge("context", "agent")
    builder.add_conditional_edges("agent", tools_condition, ["tools", END])
    builder.add_edge("tools", "context")
    return builder.compile(checkpointer=HelixCheckpointSaver(store))


async def remember(store: SessionStateStore) -> None:
    memory = ContextItem(kind="memory", content="Ada prefers tea.", memory_ids=["m-1"])
    now = datetime.now(UTC)
    await store.record_context_item(THREAD, StoredContextItem(key="m-1", item=memory, at=now))


def shown(messages: Sequence[BaseMessage]) -> list[str]:
    return [str(m.content) for m in messages if str(m.content).startswith("<context")]


async def context_rows(store: SessionStateStore) -> int:
    return sum(isinstance(row, ContextMessage) for row in await store.get_messages(THREAD))


async def test_LGF_1_2_an_item_survives_a_crash_and_is_shown_exactly_once(
    store: SessionStateStore,
) -> None:
    await store.create_session(THREAD)
    await remember(store)
    # The model fails after the delivery: the answer is lost, never the delivery.
    failing = Scripted(replies=[RuntimeError("model down")])
    with pytest.raises(RuntimeError, match="model down"):
        async with HelixGraphRun(store, THREAD) as run:
            await graph(store, failing).ainvoke({"messages": [("user", "tea?")]}, run.config)
    assert shown(failing.seen[0]) == [MEMORY]
    assert await store.list_undelivered_context_items(THREAD) == []
    assert await context_rows(store) == 1
    # A delivery whose state is never saved (the process dies before the checkpoint).
    await store.record_context_item(
        THREAD,
        StoredContextItem(
            key="m-2",
            item=ContextItem(kind="memory", content="Ada is in Paris.", memory_ids=["m-2"]),
            at=datetime.now(UTC),
        ),
    )
    async with HelixGraphRun(store, THREAD) as lost:
        delivered = await lost.context_update([])
    # Given an empty state, the update holds the row it lacks (0) and the one delivered now.
    assert [m.id for m in delivered] == ["helix-row-0", "helix-row-1"]
    model = Scripted(replies=[AIMessage("Tea in Paris."), AIMessage("Still tea.")])
    for text in ("tea?", "and now?"):
        async with HelixGraphRun(store, THREAD) as run:
            await graph(store, model).ainvoke({"messages": [("user", text)]}, run.config)
    paris = '<context kind="memory">\nAda is in Paris.\n</context>'
    assert shown(model.seen[0]) == [MEMORY, paris]
    assert shown(model.seen[1]) == [MEMORY, paris]
    assert await context_rows(store) == 2
    assert await store.list_undelivered_context_items(THREAD) == []


async def test_LGF_3_two_runners_on_one_thread_one_wins_nothing_lost_or_doubled(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    await store.create_session(THREAD)
    await remember(store)
    older_model = Scripted(replies=[AIMessage("older")])
    newer_model = Scripted(replies=[AIMessage("newer")])
    older = await HelixGraphRun(store, THREAD).__aenter__()
    async with HelixGraphRun(other_store, THREAD) as newer:
        outcomes = await asyncio.gather(
            graph(store, older_model).ainvoke({"messages": [("user", "a")]}, older.config),
            graph(other_store, newer_model).ainvoke({"messages": [("user", "b")]}, newer.config),
            return_exceptions=True,
        )
    await older.__aexit__(RunSupersededError, None, None)
    assert isinstance(outcomes[0], RunSupersededError)
    assert outcomes[0].code == "state_run_superseded"
    assert not isinstance(outcomes[1], BaseException)
    assert older_model.seen == []  # the older run stopped before its model call
    assert shown(newer_model.seen[0]) == [MEMORY]
    assert await context_rows(store) == 1
    assert await store.list_undelivered_context_items(THREAD) == []
    state = await graph(store, Scripted(replies=[])).aget_state(
        {"configurable": {"thread_id": THREAD}}
    )
    assert [m.content for m in state.values["messages"]] == ["b", MEMORY, "newer"]
    info = await store.get_session(THREAD)
    assert info is not None and info.current_run is not None
    assert (info.current_run.run_id, info.current_run.status) == (newer.run_id, "completed")


async def test_LGF_2_3_two_runners_racing_deliver_an_item_once_and_lose_none(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    await store.create_session(THREAD)
    await remember(store)
    models = [Scripted(replies=[AIMessage("one")] * 2), Scripted(replies=[AIMessage("two")] * 2)]

    async def runner(on: SessionStateStore, model: Scripted) -> None:
        for attempt in range(2):
            try:
                async with HelixGraphRun(on, THREAD) as run:
                    await graph(on, model).ainvoke({"messages": [("user", "hi")]}, run.config)
                return
            except StaleCheckpointError:
                # Read the thread inside the other's put: retryable, as documented. The
                # other may be superseded meanwhile, so without the retry both could lose.
                if attempt:
                    raise

    outcomes = await asyncio.gather(
        runner(store, models[0]), runner(other_store, models[1]), return_exceptions=True
    )
    # The loser is superseded, or stale twice.
    for outcome in outcomes:
        assert outcome is None or isinstance(outcome, RunSupersededError | StaleCheckpointError)
    assert None in outcomes
    assert await context_rows(store) == 1
    assert await store.list_undelivered_context_items(THREAD) == []
    for model, outcome in zip(models, outcomes, strict=True):
        if outcome is None:
            assert shown(model.seen[-1]) == [MEMORY]


async def test_LGF_5_6_two_answers_race_one_resolves_and_the_graph_resumes_with_it(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    ask = AIMessage("", tool_calls=[{"name": "delete_file", "args": {"path": "a"}, "id": "c1"}])
    async with HelixGraphRun(store, THREAD) as run:
        paused = graph(store, Scripted(replies=[ask]))
        await paused.ainvoke({"messages": [("user", "clean")]}, run.config)
        [approval] = await run.pause(paused)
    assert approval.tool_name == "delete_file"
    assert approval.input == {"tool": "delete_file", "path": "a"}
    with pytest.raises(ApprovalsPendingError) as pending:
        await HelixGraphRun(other_store, THREAD, resume=True).__aenter__()
    assert pending.value.approval_ids == (approval.approval_id,)
    with pytest.raises(ValidationError) as not_json:
        await decide_approval(store, THREAD, approval.approval_id, {"approve": object()})  # type: ignore[dict-item]
    assert (not_json.value.code, not_json.value.session_id) == ("validation_error", THREAD)
    assert [a.approval_id for a in await store.list_pending_approvals(THREAD)] == [
        approval.approval_id
    ]
    answers = await asyncio.gather(
        decide_approval(store, THREAD, approval.approval_id, {"approve": True}),
        decide_approval(other_store, THREAD, approval.approval_id, {"approve": False}),
    )
    assert sorted(answers) == ["already-resolved", "resolved"]
    assert await store.list_pending_approvals(THREAD) == []
    model = Scripted(replies=[AIMessage("done")])
    async with HelixGraphRun(other_store, THREAD, resume=True) as resumed:
        result = await graph(other_store, model).ainvoke(
            await resumed.resume_command(), resumed.config
        )
    winner = "deleted a" if answers[0] == "resolved" else "kept a"
    assert [m.content for m in result["messages"][-2:]] == [winner, "done"]


async def test_LGF_11_a_bad_strategy_or_trim_is_refused_naming_the_session(
    store: SessionStateStore,
) -> None:
    with pytest.raises(ValidationError) as bad:
        HelixGraphRun(store, THREAD, strategy="eager")  # type: ignore[arg-type]
    assert (bad.value.code, bad.value.session_id) == ("validation_error", THREAD)
    assert "'eager'" in bad.value.message
    for keep in (0, True, "3"):
        with pytest.raises(ValidationError) as trim:
            HelixGraphRun(store, THREAD, keep_messages=keep)  # type: ignore[arg-type]
        assert trim.value.session_id == THREAD
        assert repr(keep) in trim.value.message
    assert await store.get_session(THREAD) is None


async def test_LGF_4_a_tool_answer_after_its_run_reaches_the_next_run_as_a_notice(
    store: SessionStateStore,
) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    @tool
    async def slow_search(query: str) -> str:
        """Search for ``query`` (slowly)."""
        started.set()
        await release.wait()
        return f"found {query}"

    def slow_graph(model: Scripted) -> Any:
        async def agent(state: MessagesState) -> dict[str, Any]:
            return {"messages": [await model.ainvoke(state["messages"])]}

        builder = StateGraph(MessagesState)
        builder.add_node("context", helix_context)
        builder.add_node("agent", agent)
        builder.add_node("tools", ToolNode([slow_search]))
        builder.add_edge(START, "context")
        builder.add_edge("context", "agent")
        builder.add_conditional_edges("agent", tools_condition, ["tools", END])
        builder.add_edge("tools", "context")
        return builder.compile(checkpointer=HelixCheckpointSaver(store))

    search = AIMessage(
        "", tool_calls=[{"name": "slow_search", "args": {"query": "tea"}, "id": "s1"}]
    )
    older_model = Scripted(replies=[search, AIMessage("never")])

    async def older() -> None:
        async with HelixGraphRun(store, THREAD) as run:
            await slow_graph(older_model).ainvoke({"messages": [("user", "a")]}, run.config)

    first = asyncio.ensure_future(older())
    await started.wait()
    async with HelixGraphRun(store, THREAD):  # supersedes the older run
        pass
    release.set()
    with pytest.raises(RunSupersededError):
        await first
    assert len(older_model.seen) == 1  # no model call after the refused tool answer
    [late] = await store.list_undelivered_late_answers(THREAD)
    assert (late.call_id, late.tool_name, late.output) == ("s1", "slow_search", "found tea")
    model = Scripted(replies=[AIMessage("noted")])
    async with HelixGraphRun(store, THREAD) as run:
        await slow_graph(model).ainvoke({"messages": [("user", "news?")]}, run.config)
    [notice] = shown(model.seen[0])
    assert "The tool call s1 (slow_search) answered after its run had ended" in notice
    assert '"found tea"' in notice
    assert await store.list_undelivered_late_answers(THREAD) == []


@tool
def dump_log() -> str:
    """The server log (long)."""
    return "\n".join("ERROR disk full" if i == 777 else f"line {i}: ok" for i in range(4000))


@tool
def restart(name: str) -> str:
    """Restart a service."""
    return f"{name} restarted"


def ask(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


def tooled(store: SessionStateStore, model: Scripted) -> Any:
    """context -> agent, offered ``dump_log`` and the run's tools -> tools -> context ..."""

    async def agent(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        bound = model.bind_tools([dump_log, *helix_run(config).tools])
        return {"messages": [await bound.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("context", helix_context)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([dump_log, restart, *CONTEXT_TOOLS]))
    builder.add_edge(START, "context")
    builder.add_edge("context", "agent")
    builder.add_conditional_edges("agent", tools_condition, ["tools", END])
    builder.add_edge("tools", "context")
    return builder.compile(checkpointer=HelixCheckpointSaver(store))


def read_back(messages: list[BaseMessage]) -> AIMessage:
    output_id = "out-" + str(messages[-1].content).split("out-", 1)[1].split()[0]
    return ask("read_tool_output", {"output_id": output_id, "grep": "ERROR"}, "c2")


async def test_LGF_7_8_a_large_output_is_offloaded_and_read_back(
    store: SessionStateStore,
) -> None:
    model = Scripted(replies=[ask("dump_log", {}, "c1"), read_back, AIMessage("disk full")])
    async with HelixGraphRun(store, THREAD, strategy="hybrid") as run:
        result = await tooled(store, model).ainvoke({"messages": [("user", "why?")]}, run.config)
    summary = str(model.seen[1][-1].content)
    assert summary.startswith("[Output stored as out-") and "4,000 lines" in summary
    assert len(summary) < 5_000
    tool_messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert tool_messages[0].content == summary  # the state keeps the summary, not the output
    assert "778: ERROR disk full" in str(model.seen[2][-1].content)
    assert model.offers[0] == ["dump_log", "read_tool_output", "recall_history"]
    whole = Scripted(replies=[ask("dump_log", {}, "c3"), AIMessage("ok")])
    async with HelixGraphRun(store, "static-thread", strategy="static") as run:
        await tooled(store, whole).ainvoke({"messages": [("user", "why?")]}, run.config)
    assert str(whole.seen[1][-1].content) == dump_log.invoke({})
    assert whole.offers[0] == ["dump_log"]


async def test_LGF_9_trimmed_messages_are_archived_and_recalled(store: SessionStateStore) -> None:
    recall = ask("recall_history", {"grep": "blue"}, "r1")
    model = Scripted(replies=[AIMessage("noted"), AIMessage("ok"), recall, AIMessage("blue")])
    graph = tooled(store, model)
    for text in ("my favourite colour is blue", "and the sky?", "what colour did I say?"):
        async with HelixGraphRun(store, THREAD, strategy="hybrid", keep_messages=2) as run:
            result = await graph.ainvoke({"messages": [("user", text)]}, run.config)
    assert "my favourite colour is blue" not in [m.content for m in result["messages"]]
    assert [m.content for m in model.seen[2]] == ["ok", "what colour did I say?"]
    recalled = str(model.seen[3][-1].content)
    assert recalled.startswith("row 0 (user) line 1: my favourite colour is blue\n")


def trimming(store: SessionStateStore, model: Scripted, *, summarise: bool = False) -> Any:
    """:func:`tooled` whose graph trims its own state after each answer, as LangGraph's
    docs show: ``RemoveMessage`` for all but the newest two messages, or (``summarise``)
    for every message, replaced by a summary."""

    async def agent(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        bound = model.bind_tools(helix_run(config).tools)
        return {"messages": [await bound.ainvoke(state["messages"])]}

    def trim(state: MessagesState) -> dict[str, Any]:
        if summarise:
            summary = f"({len(state['messages'])} messages summarised)"
            return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), AIMessage(summary)]}
        return {"messages": [RemoveMessage(id=m.id or "") for m in state["messages"][:-2]]}

    builder = StateGraph(MessagesState)
    builder.add_node("context", helix_context)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(CONTEXT_TOOLS))
    builder.add_node("trim", trim)
    builder.add_edge(START, "context")
    builder.add_edge("context", "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: "trim"})
    builder.add_edge("tools", "context")
    builder.add_edge("trim", END)
    return builder.compile(checkpointer=HelixCheckpointSaver(store))


@pytest.mark.parametrize("summarise", [False, True], ids=["trim", "summarise"])
async def test_LGF_12_messages_the_graph_removes_itself_are_archived_and_recalled(
    store: SessionStateStore, summarise: bool
) -> None:
    recall = ask("recall_history", {"grep": "blue"}, "r1")
    model = Scripted(replies=[AIMessage("noted"), AIMessage("ok"), recall, AIMessage("blue")])
    graph = trimming(store, model, summarise=summarise)
    for text in ("my favourite colour is blue", "and the sky?", "what colour did I say?"):
        async with HelixGraphRun(store, THREAD, strategy="hybrid") as run:
            result = await graph.ainvoke({"messages": [("user", text)]}, run.config)
    contents = [m.content for m in result["messages"]]
    assert "my favourite colour is blue" not in contents
    recalled = str(model.seen[3][-1].content).splitlines()
    # Each removed message is archived once, with the run's row of it, newest first.
    assert recalled[-2:] == [
        "row 0 (user) line 1: my favourite colour is blue",
        "[1 hit, newest first]",
    ]
    rows = [str(m.content) for m in await store.get_messages(THREAD)]
    assert rows.count("my favourite colour is blue") == 1 and rows.count("noted") == 1


async def test_LGF_12_under_static_a_removal_is_not_archived(store: SessionStateStore) -> None:
    model = Scripted(replies=[AIMessage("noted"), AIMessage("ok")])
    graph = trimming(store, model)
    for text in ("my favourite colour is blue", "and the sky?"):
        async with HelixGraphRun(store, THREAD, strategy="static") as run:
            await graph.ainvoke({"messages": [("user", text)]}, run.config)
    assert [m for m in await store.get_messages(THREAD) if "blue" in str(m.content)] == []


async def test_LGF_10_11_a_source_activated_is_offered_and_replayed_after_a_restart(
    store: SessionStateStore,
) -> None:
    sources = {"ops": [restart]}
    activate = ask("activate_tool_source", {"source_name": "ops"}, "a1")
    model = Scripted(replies=[activate, ask("restart", {"name": "db"}, "a2"), AIMessage("done")])
    async with HelixGraphRun(store, THREAD, strategy="dynamic", tool_sources=sources) as run:
        assert "## Available Tool Sources" in run.instructions("You run ops.")
        await tooled(store, model).ainvoke({"messages": [("user", "fix db")]}, run.config)
    context = ["read_tool_output", "recall_history"]
    assert model.offers[0] == sorted(["activate_tool_source", "dump_log", *context])
    assert model.offers[1] == sorted(["dump_log", "restart", *context])
    assert str(model.seen[2][-1].content) == "db restarted"
    later = Scripted(replies=[AIMessage("ok")])
    async with HelixGraphRun(store, THREAD, tool_sources=sources) as run:  # a restart
        stream = tooled(store, later).astream({"messages": [("user", "status?")]}, run.config)
        steps = [step async for step in stream]
    assert [next(iter(step)) for step in steps] == ["context", "agent"]
    assert run.strategy == "dynamic"
    assert later.offers[0] == sorted(["dump_log", "restart", *context])
    assert run.instructions("You run ops.") == "You run ops."
