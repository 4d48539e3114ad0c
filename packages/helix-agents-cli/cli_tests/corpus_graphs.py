"""The corpus's LangGraph thread and OpenAI Agents session: the next turn of each must
work on the store the corpus was moved to (docs/export.md, EXP-13)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph

from helix_agents.core import SessionStateStore
from helix_agents.langgraph import HelixCheckpointSaver
from helix_agents.openai_agents import HelixSession

THREAD: RunnableConfig = {"configurable": {"thread_id": "lg-1"}}


def _reply(state: MessagesState) -> dict[str, list[tuple[str, str]]]:
    return {"messages": [("assistant", f"reply {len(state['messages'])}")]}


_builder = StateGraph(MessagesState)
_builder.add_node("reply", _reply)
_builder.add_edge(START, "reply")


async def graph_turn(store: SessionStateStore, text: str) -> None:
    """One turn of the LangGraph thread and of the OpenAI Agents session."""
    graph = _builder.compile(checkpointer=HelixCheckpointSaver(store))
    said: MessagesState = {"messages": [HumanMessage(text)]}
    await graph.ainvoke(said, THREAD)
    session = HelixSession("oa-1", store, user_id="ann")
    await session.add_items(
        [{"role": "user", "content": text}, {"role": "assistant", "content": f"re: {text}"}]
    )


async def graph_view(store: SessionStateStore) -> dict[str, Any]:
    """The thread's messages as LangGraph reads them, the session's items as the SDK does."""
    graph = _builder.compile(checkpointer=HelixCheckpointSaver(store))
    state = await graph.aget_state(THREAD)
    return {
        "langgraph": [(m.type, m.content) for m in state.values["messages"]],
        "openai": await HelixSession("oa-1", store, user_id="ann").get_items(),
    }


async def graph_next_turn(store: SessionStateStore) -> None:
    """A second turn continues both conversations where the first left them."""
    before = await graph_view(store)
    await graph_turn(store, "again")
    after = await graph_view(store)
    assert after["langgraph"][: len(before["langgraph"])] == before["langgraph"]
    assert after["langgraph"][-1] == ("ai", "reply 3")
    assert after["openai"] == [
        *before["openai"],
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": "re: again"},
    ]
