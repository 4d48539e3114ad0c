"""LGF-14: the token usage of a graph's chat model calls, from LangChain's ``usage_metadata``,
on each of the four backends."""

from __future__ import annotations

from typing import Any

import pytest
from helix_fixtures import store, stores
from langchain_core.language_models import LangSmithParams
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt

from helix_agents.core import SessionStateStore
from helix_agents.core.models import Usage, UsageTotals
from helix_agents.langgraph import HelixCheckpointSaver, HelixGraphRun, helix_context

__all__ = ["store", "stores"]  # the shared fixtures, on four backends

pytestmark = pytest.mark.anyio

THREAD = "thread"


def used(input_tokens: int, output_tokens: int, cache_read: int = 0) -> UsageMetadata:
    """LangChain's usage of one call, as a provider's chat model reports it."""
    return UsageMetadata(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
        input_token_details={"cache_read": cache_read},
    )


def reply(text: str, usage: UsageMetadata, model: str | None = "gpt-4o", **kw: Any) -> AIMessage:
    meta = {} if model is None else {"model_name": model}
    return AIMessage(text, usage_metadata=usage, response_metadata=meta, **kw)


class NamedFake(GenericFakeChatModel):
    """The fake chat model naming its model as LangChain's providers do (``ls_model_name``)."""

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        return LangSmithParams(ls_model_name="claude-sonnet", ls_model_type="chat")


@tool
def weather(city: str) -> str:
    """The weather in ``city``."""
    return "sunny"


@tool
def refund(amount: int) -> str:
    """Refund ``amount``, once a person approved it."""
    return "refunded" if interrupt({"amount": amount}) else "refused"


def graph_of(*models: GenericFakeChatModel, tools: list[Any] | None = None) -> Any:
    """context -> agent -> tools -> context ...; the agent asks ``models`` in turn, without
    passing a config (LangGraph hands the run's callbacks down)."""
    asked = iter(models)

    async def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await next(asked).ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("context", helix_context)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools or [weather]))
    builder.add_edge(START, "context")
    builder.add_edge("context", "agent")
    builder.add_conditional_edges("agent", tools_condition, ["tools", END])
    builder.add_edge("tools", "context")
    return builder


async def test_LGF_14_a_runs_usage_is_recorded_per_model_when_it_ends(
    store: SessionStateStore,
) -> None:
    call = {"name": "weather", "args": {"city": "Lisbon"}, "id": "c1"}
    first = GenericFakeChatModel(messages=iter([reply("", used(100, 10, 60), tool_calls=[call])]))
    second = NamedFake(messages=iter([reply("Sunny.", used(200, 20), model=None)]))
    graph = graph_of(first, second).compile(checkpointer=HelixCheckpointSaver(store))
    async with HelixGraphRun(store, THREAD, user_id="u") as run:
        await graph.ainvoke({"messages": [("user", "Weather?")]}, run.config)
        assert await store.get_usage(THREAD) == UsageTotals()  # recorded when the run ends
    gpt = Usage(model="gpt-4o", input_tokens=100, output_tokens=10, cached_tokens=60)
    claude = Usage(model="claude-sonnet", input_tokens=200, output_tokens=20)
    totals = await store.get_usage(THREAD)
    assert totals.models == (claude, gpt)
    assert (totals.requests, totals.input_tokens, totals.cached_tokens) == (2, 300, 60)
    # The next run on the thread counts only its own call; a call whose model says no
    # name is counted as "unknown".
    third = GenericFakeChatModel(messages=iter([reply("Still sunny.", used(5, 1), model=None)]))
    graph = graph_of(third).compile(checkpointer=HelixCheckpointSaver(store))
    async with HelixGraphRun(store, THREAD) as run:
        await graph.ainvoke({"messages": [("user", "And now?")]}, run.config)
        assert await run.record_usage() == (
            Usage(model="unknown", input_tokens=5, output_tokens=1),
        )
        assert await run.record_usage() == ()  # nothing new: nothing written
    totals = await store.get_usage(THREAD)
    assert [u.model for u in totals.models] == ["claude-sonnet", "gpt-4o", "unknown"]
    assert totals.input_tokens == 305
    assert (await store.get_user_usage("u")).usage == totals


async def test_LGF_14_a_paused_run_records_its_usage(store: SessionStateStore) -> None:
    call = {"name": "refund", "args": {"amount": 5}, "id": "c1"}
    model = GenericFakeChatModel(
        messages=iter([reply("", used(40, 4, 100), tool_calls=[call])])  # cache_read capped
    )
    graph = graph_of(model, tools=[refund]).compile(checkpointer=HelixCheckpointSaver(store))
    async with HelixGraphRun(store, THREAD) as run:
        await graph.ainvoke({"messages": [("user", "Refund 5")]}, run.config)
        assert len(await run.pause(graph)) == 1
    assert (await store.get_usage(THREAD)).models == (
        Usage(model="gpt-4o", input_tokens=40, output_tokens=4, cached_tokens=40),
    )
