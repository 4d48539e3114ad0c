"""What the store adds to a LangGraph graph, end to end, through ``HelixGraphRun``.

Run it with ``uv run python examples/langgraph_features.py [STORE_URL]`` (default: a
SQLite file; a ``postgresql://`` URL works the same). It needs no network: a scripted
chat model stands in for a real one, in a real ``StateGraph`` (a context node, the model,
LangGraph's ``ToolNode``) on ``HelixCheckpointSaver``. It shows:

1. a memory the app records reaches the next model call, delivered exactly once;
2. a second runner on the thread supersedes the first, whose writes are refused, and the
   first one's tool answer, arriving late, reaches the next run as a notice;
3. an ``interrupt()`` becomes a pending approval; a *second process* (this script, started
   again with ``--decide``) lists it, answers it (a second answer says
   ``already-resolved``) and resumes the graph there;
4. under ``dynamic``, a 40,000-character tool output reaches the model as its summary and
   is read back with ``read_tool_output(grep=...)``; trimmed messages are found again
   with ``recall_history``; a tool source is activated; a later run (a restart) keeps the
   strategy and the activation.

See docs/integrations/langgraph.md.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt
from pydantic import Field

from helix_agents.core import (
    ContextItem,
    RunSupersededError,
    SessionStateStore,
    StoredContextItem,
    open_store,
)
from helix_agents.langgraph import (
    CONTEXT_TOOLS,
    HelixCheckpointSaver,
    HelixGraphRun,
    StaleCheckpointError,
    decide_approval,
    helix_context,
    helix_run,
)

Step = AIMessage | Callable[[list[BaseMessage], list[str]], AIMessage]


class ScriptedModel(BaseChatModel):
    """A chat model that answers from a script: an ``AIMessage``, or a function of what it
    was shown (messages, offered tool names). It records every call."""

    steps: list[Any]  # of Step
    calls: list[tuple[list[BaseMessage], list[str]]] = Field(default_factory=list)
    offered: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.model_copy(update={"offered": sorted(t.name for t in tools)})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append((messages, self.offered))
        step = self.steps.pop(0)
        reply = step(messages, self.offered) if callable(step) else step
        return ChatResult(generations=[ChatGeneration(message=reply)])


def call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    """A model reply that calls one tool."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def build(
    store: SessionStateStore,
    model: ScriptedModel,
    tools: list[BaseTool],
    sourced: Sequence[BaseTool] = (),
) -> Any:
    """The agent: context node -> model -> tools -> context ..., on the helix saver.

    The model is offered ``tools`` and the run's tools; ``ToolNode`` runs any of them and
    of ``sourced`` (the tools of the run's tool sources).
    """

    async def agent(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        run = helix_run(config)
        bound = model.bind_tools([*tools, *run.tools])
        system = SystemMessage(run.instructions("You keep the servers running."))
        return {"messages": [await bound.ainvoke([system, *state["messages"]])]}

    builder = StateGraph(MessagesState)
    builder.add_node("context", helix_context)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([*tools, *sourced, *CONTEXT_TOOLS]))
    builder.add_edge(START, "context")
    builder.add_edge("context", "agent")
    builder.add_conditional_edges("agent", tools_condition, ["tools", END])
    builder.add_edge("tools", "context")
    graph: CompiledStateGraph[Any, Any, Any, Any] = builder.compile(
        checkpointer=HelixCheckpointSaver(store)
    )
    return graph


def context_lines(messages: Sequence[BaseMessage]) -> list[str]:
    """The hidden context among ``messages``, one line each."""
    return [
        str(m.content).replace("\n", " ") for m in messages if str(m.content).startswith("<context")
    ]


async def run_once(
    store: SessionStateStore, thread: str, model: ScriptedModel, text: str, **kw: Any
) -> str:
    """One invocation as one run of the store; the last message's text."""
    graph = build(store, model, kw.pop("tools", []), kw.pop("sourced", ()))
    async with HelixGraphRun(store, thread, **kw) as run:
        result = await graph.ainvoke({"messages": [("user", text)]}, run.config)
    last: AnyMessage = result["messages"][-1]
    return str(last.content)


async def memories(store: SessionStateStore, thread: str) -> None:
    print("== 1. a memory reaches the model, delivered once")
    memory = ContextItem(kind="memory", content="Ada prefers tea.", memory_ids=["m-1"])
    record = StoredContextItem(key="m-1", item=memory, at=datetime.now(UTC))
    await store.create_session(thread)  # the app's own session
    await store.record_context_item(thread, record)
    model = ScriptedModel(steps=[AIMessage("Tea, then."), AIMessage("Still tea.")])
    print("agent>", await run_once(store, thread, model, "Something to drink?"))
    print("model saw:", context_lines(model.calls[-1][0]))
    print("still queued:", len(await store.list_undelivered_context_items(thread)))
    await run_once(store, thread, model, "And later?")
    print("next run, model saw (from the state):", context_lines(model.calls[-1][0]))


async def two_runners(store: SessionStateStore, thread: str) -> None:
    print("\n== 2. two runners: the newer one wins; the older one's tool answers late")
    started, release = asyncio.Event(), asyncio.Event()

    @tool
    async def slow_search(query: str) -> str:
        """Search for ``query`` (slowly)."""
        started.set()
        await release.wait()
        return f"3 results for {query}"

    slow = ScriptedModel(steps=[call("slow_search", {"query": "tea"}, "call-search")])
    first = asyncio.ensure_future(run_once(store, thread, slow, "Search", tools=[slow_search]))
    await started.wait()
    for attempt in range(3):
        quick = ScriptedModel(steps=[AIMessage("Hi!")])
        try:
            print("second runner>", await run_once(store, thread, quick, "Hello?"))
            break
        except StaleCheckpointError:
            # It read the thread while the first runner's checkpoint was landing: the
            # saver's answer is retryable, so reload the thread and run again.
            if attempt == 2:
                raise
    release.set()
    try:
        await first
    except RunSupersededError as exc:
        print(f"first runner refused: {exc.code}")
    late = await store.list_undelivered_late_answers(thread)
    print("queued late answers:", [(a.call_id, a.output) for a in late])
    model = ScriptedModel(steps=[AIMessage("Noted.")])
    await run_once(store, thread, model, "Anything new?")
    print("next run, model saw:", context_lines(model.calls[-1][0])[-1:])


@tool
def delete_file(path: str) -> str:
    """Delete ``path`` (pretend), once a person approved it."""
    answer = interrupt({"tool": "delete_file", "path": path})
    return f"deleted {path}" if answer.get("approve") else f"kept {path}: {answer.get('why')}"


async def approval(url: str, store: SessionStateStore, thread: str) -> None:
    print("\n== 3. an interrupt as an approval, answered and resumed in a second process")
    asks = ScriptedModel(steps=[call("delete_file", {"path": "old.log"}, "c-1")])
    graph = build(store, asks, [delete_file])
    async with HelixGraphRun(store, thread) as run:
        await graph.ainvoke({"messages": [("user", "Clean up")]}, run.config)
        pending = await run.pause(graph)
    print("pending:", [(p.tool_name, p.input) for p in pending])
    # A restart: another interpreter answers and resumes; this one only waits for it.
    child = await asyncio.create_subprocess_exec(
        sys.executable, __file__, url, "--decide", thread, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await child.communicate()
    if child.returncode:
        raise SystemExit(f"the second process failed ({child.returncode})")
    print(out.decode(), end="")
    info = await store.get_session(thread)
    assert info is not None and info.current_run is not None
    state = await graph.aget_state({"configurable": {"thread_id": thread}})
    print(
        f"back in the first process: run {info.current_run.status}, "
        f"{len(state.values['messages'])} messages, "
        f"{len(await store.list_pending_approvals(thread))} pending approvals"
    )


async def decide(url: str, thread: str) -> None:
    """The second process: list, answer twice, resume."""
    async with open_store(url) as store:
        [pending] = await store.list_pending_approvals(thread)
        print(f"[second process] listed: {pending.tool_name} {pending.input}")
        for approve in (True, False):
            answer = await decide_approval(store, thread, pending.approval_id, {"approve": approve})
            print(f"[second process] answer approve={approve}: {answer}")
        model = ScriptedModel(steps=[AIMessage("Deleted old.log.")])
        graph = build(store, model, [delete_file])
        async with HelixGraphRun(store, thread, resume=True) as run:
            result = await graph.ainvoke(await run.resume_command(), run.config)
        tool_output = model.calls[0][0][-1].content
        print(
            f"[second process] tool ran: {tool_output!r}; agent> {result['messages'][-1].content}"
        )


@tool
def server_log() -> str:
    """The server's log (40,000 characters)."""
    return "\n".join(
        "00377 ERROR disk full" if n == 377 else f"{n:05d} ok " + "." * 70 for n in range(500)
    )


@tool
def restart_service(name: str) -> str:
    """Restart a service."""
    return f"{name} restarted"


async def strategies(store: SessionStateStore, thread: str) -> None:
    print("\n== 4. dynamic: offloaded output read back; trimmed history recalled; a tool source")

    def read_back(messages: list[BaseMessage], offered: list[str]) -> AIMessage:
        summary = str(messages[-1].content)
        print("model saw:", summary.splitlines()[0])
        output_id = "out-" + summary.split("out-", 1)[1].split()[0]
        return call("read_tool_output", {"output_id": output_id, "grep": "ERROR"}, "c-2")

    def recall(messages: list[BaseMessage], offered: list[str]) -> AIMessage:
        lines = str(messages[-1].content).splitlines()
        print("read back:", [line for line in lines if "ERROR" in line])
        print(f"messages shown after trimming: {len(messages) - 1}")
        return call("recall_history", {"grep": "disk"}, "c-3")

    def activate(messages: list[BaseMessage], offered: list[str]) -> AIMessage:
        print("recalled:", str(messages[-1].content).splitlines()[0])
        print("offered:", offered)
        return call("activate_tool_source", {"source_name": "ops"}, "c-4")

    def restart(messages: list[BaseMessage], offered: list[str]) -> AIMessage:
        print("offered after the activation:", offered)
        return call("restart_service", {"name": "db"}, "c-5")

    model = ScriptedModel(
        steps=[
            call("server_log", {}, "c-1"),
            read_back,
            recall,
            activate,
            restart,
            AIMessage("Freed the disk, restarted db."),
        ]
    )
    sources = {"ops": [restart_service]}
    options: dict[str, Any] = {"tool_sources": sources, "keep_messages": 4}
    tools: list[BaseTool] = [server_log]
    question = "Why is the disk full?"
    reply = await run_once(
        store,
        thread,
        model,
        question,
        tools=tools,
        sourced=[restart_service],
        strategy="dynamic",
        **options,
    )
    print("agent>", reply)
    later = ScriptedModel(steps=[AIMessage("All good.")])
    graph = build(store, later, tools, [restart_service])
    async with HelixGraphRun(store, thread, **options) as run:  # a restart
        await graph.ainvoke({"messages": [("user", "Status?")]}, run.config)
    print(f"next run: strategy {run.strategy}, offered:", later.calls[0][1])


async def main(url: str) -> None:
    """The four parts, each on a thread of its own."""
    tag = uuid.uuid4().hex[:8]
    async with open_store(url) as store:
        await memories(store, f"lg-memory-{tag}")
        await two_runners(store, f"lg-runners-{tag}")
        await approval(url, store, f"lg-approval-{tag}")
        await strategies(store, f"lg-strategies-{tag}")


if __name__ == "__main__":
    args = sys.argv[1:]
    target = args[0] if args else "sqlite:///helix-langgraph-features.db"
    if "--decide" in args:
        asyncio.run(decide(target, args[args.index("--decide") + 1]))
    else:
        asyncio.run(main(target))
