"""A LangGraph agent that stops for approval, and resumes in another process, on any store.

The graph: the model asks for a tool (``delete_file``), an approval node
interrupts the run until a person decides, then the tool node runs the call
and the model sums up. The model is :class:`ScriptedChatModel`, a fake that
answers from a script, so the example runs offline.

Each step is its own process: the state between them lives in the store only::

    uv run python examples/langgraph_resume.py sqlite:///lg.db thread-1 start
    uv run python examples/langgraph_resume.py sqlite:///lg.db thread-1 approve

(``reject`` instead of ``approve`` refuses the call). Any store URL works:
``postgresql://…?auto_migrate=true``, ``redis://…``; ``--namespace`` keeps the
example's data apart. ``memory://`` cannot outlive a process, so ``both`` runs
the two steps in one process, on two separately built graphs. Without
arguments, the example runs both steps as two processes on ``./helix-langgraph-demo.db``.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt

from helix_agents.core import open_store
from helix_agents.langgraph import HelixCheckpointSaver

DEMO_URL = "sqlite:///helix-langgraph-demo.db"
REQUEST = "Please delete /tmp/old-report.txt"


@tool
def delete_file(path: str) -> str:
    """Delete the file at ``path`` (here: pretend to)."""
    return f"deleted {path}"


class ScriptedChatModel(BaseChatModel):
    """A fake chat model: asks for ``delete_file`` once, then reports the tool's answer."""

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
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(content=f"Finished: {last.content}.")
        else:
            path = str(last.content).rsplit(" ", 1)[-1]
            call = {"name": "delete_file", "args": {"path": path}, "id": "call-1"}
            reply = AIMessage(content="", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """The script already knows its one tool."""
        return self


def build_graph(saver: HelixCheckpointSaver) -> CompiledStateGraph[Any, Any, Any, Any]:
    """agent -> approval (interrupts) -> tools -> agent -> end."""
    model = ScriptedChatModel().bind_tools([delete_file])

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    def needs_tool(state: MessagesState) -> Literal["approval", "__end__"]:
        last = state["messages"][-1]
        return "approval" if isinstance(last, AIMessage) and last.tool_calls else "__end__"

    def approval(state: MessagesState) -> Command[Literal["tools", "agent"]]:
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        call = last.tool_calls[0]
        decision = interrupt({"tool": call["name"], "args": call["args"]})
        if decision == "approve":
            return Command(goto="tools")
        refusal = ToolMessage(content="the user refused", tool_call_id=call["id"])
        return Command(goto="agent", update={"messages": [refusal]})

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("approval", approval)
    graph.add_node("tools", ToolNode([delete_file]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", needs_tool)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=saver)


async def start(url: str, thread: str, namespace: str | None) -> None:
    """Run until the approval interrupt, then stop (the process may exit)."""
    async with open_store(url, namespace=namespace) as store:
        graph = build_graph(HelixCheckpointSaver(store))
        config: RunnableConfig = {"configurable": {"thread_id": thread}}
        await graph.ainvoke({"messages": [HumanMessage(REQUEST)]}, config)
        state = await graph.aget_state(config)
        for pending in state.interrupts:
            print(f"waiting for approval: {pending.value}")


async def resume(url: str, thread: str, namespace: str | None, decision: str) -> None:
    """Load the thread from the store and answer the interrupt with ``decision``."""
    async with open_store(url, namespace=namespace) as store:
        graph = build_graph(HelixCheckpointSaver(store))
        config: RunnableConfig = {"configurable": {"thread_id": thread}}
        state = await graph.aget_state(config)
        if not state.interrupts:
            raise SystemExit(f"thread {thread!r} is not waiting for an approval")
        print(f"resuming {thread!r} at {state.next}: {decision}")
        result = await graph.ainvoke(Command(resume=decision), config)
        for message in result["messages"]:
            print(f"{message.type}: {message.content or message.tool_calls}")


def main(argv: Sequence[str]) -> None:
    """Parse the command line and run one step (or, without arguments, the two-process demo)."""
    if not argv:
        for step in ("start", "approve"):
            subprocess.run([sys.executable, __file__, DEMO_URL, "demo-thread", step], check=True)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("url", help="store URL, e.g. sqlite:///lg.db")
    parser.add_argument("thread", help="LangGraph thread id (the session id)")
    parser.add_argument("step", choices=["start", "approve", "reject", "both"])
    parser.add_argument("--namespace", help="keep the data apart (schema, key namespace, file)")
    args = parser.parse_args(argv)
    if args.step in ("start", "both"):
        asyncio.run(start(args.url, args.thread, args.namespace))
    if args.step in ("approve", "reject"):
        asyncio.run(resume(args.url, args.thread, args.namespace, args.step))
    elif args.step == "both":
        asyncio.run(resume(args.url, args.thread, args.namespace, "approve"))


if __name__ == "__main__":
    main(sys.argv[1:])
