"""What the store adds to an OpenAI Agents SDK runner, end to end, through ``HelixRun``.

Run it with ``uv run python examples/openai_agents_features.py [STORE_URL]`` (default: a
SQLite file; a ``postgresql://`` URL works the same). It needs no network: the SDK's
test model (``agents.testing.ScriptedModel``) stands in for a real model. It shows:

1. a memory the app records reaches the next model call, delivered exactly once;
2. a second runner on the session supersedes the first, whose writes are refused, and
   the first one's tool answer, arriving late, reaches the next run as a notice;
3. a tool approval becomes a pending approval; a *second process* (this script, started
   again with ``--decide``) lists it, resolves it (a second resolve says
   ``already-resolved``) and resumes the run there;
4. under the ``dynamic`` strategy, a 40,000-character tool output reaches the model as its
   summary and is read back with ``read_tool_output(grep=...)``; a tool source is
   activated; a later run (a restart) keeps the strategy and the activation;
5. under ``hybrid``, the SDK's compaction (``OpenAIResponsesCompactionSession``) replaces
   the history with its summary, and what it replaced stays searchable: the next run's
   model finds it with ``recall_history``.

See docs/integrations/openai-agents.md.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, cast

from agents import Agent, Runner, function_tool
from agents.memory import OpenAIResponsesCompactionSession
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from agents.tracing import set_tracing_disabled

from helix_agents.core import (
    ContextItem,
    RunSupersededError,
    SessionStateStore,
    StoredContextItem,
    open_store,
)
from helix_agents.openai_agents import HelixRun, decide_approval


def context_lines(model: ScriptedModel) -> list[str]:
    """The hidden context the model was shown on its last call, one line each."""
    shown: list[Any] = model.calls[-1].input
    return [
        str(i["content"]).replace("\n", " ")
        for i in shown
        if str(i.get("content", "")).startswith("<context")
    ]


async def run_once(store: SessionStateStore, session_id: str, agent: Agent[Any], text: str) -> str:
    """One ``Runner.run`` as one run of the store."""
    async with HelixRun(store, session_id, user_id="ada") as run:
        result = await Runner.run(agent, text, session=run.session, run_config=run.run_config)
    return str(result.final_output)


async def memories(store: SessionStateStore, session_id: str) -> None:
    print("== 1. a memory reaches the model, delivered once")
    await store.create_session(session_id, user_id="ada")  # the app's own session
    memory = ContextItem(kind="memory", content="Ada prefers tea.", memory_ids=["m-1"])
    record = StoredContextItem(key="m-1", item=memory, at=datetime.now(UTC))
    await store.record_context_item(session_id, record)
    model = ScriptedModel([ModelStep(output=[assistant_message("Tea, then.")])] * 2)
    agent = Agent(name="Host", model=model)
    print("agent>", await run_once(store, session_id, agent, "Something to drink?"))
    print("model saw:", context_lines(model))
    print("still queued:", len(await store.list_undelivered_context_items(session_id)))
    await run_once(store, session_id, agent, "And later?")
    print("next run, model saw (from the history):", context_lines(model))


async def two_runners(store: SessionStateStore, session_id: str) -> None:
    print("\n== 2. two runners: the newer one wins; the older one's tool answers late")
    started, release = asyncio.Event(), asyncio.Event()

    @function_tool
    async def slow_search(query: str) -> str:
        """Search for ``query`` (slowly)."""
        started.set()
        await release.wait()
        return f"3 results for {query}"

    slow = ScriptedModel(
        [ModelStep(output=[function_call("slow_search", {"query": "tea"}, call_id="call-search")])]
    )
    first = asyncio.ensure_future(
        run_once(store, session_id, Agent(name="Host", model=slow, tools=[slow_search]), "Search")
    )
    await started.wait()
    quick = Agent(name="Host", model=ScriptedModel([ModelStep(output=[assistant_message("Hi!")])]))
    print("second runner> ", await run_once(store, session_id, quick, "Hello?"))
    release.set()
    try:
        await first
    except RunSupersededError as exc:
        print(f"first runner refused: {exc.code}")
    late = await store.list_undelivered_late_answers(session_id)
    print("queued late answers:", [(a.call_id, a.output) for a in late])
    model = ScriptedModel([ModelStep(output=[assistant_message("Noted.")])])
    await run_once(store, session_id, Agent(name="Host", model=model), "Anything new?")
    print("next run, model saw:", context_lines(model)[-1:])


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete ``path`` (pretend)."""
    return f"deleted {path}"


async def approval(url: str, store: SessionStateStore, session_id: str) -> None:
    print("\n== 3. a tool approval, decided and resumed in a second process")
    asks = ScriptedModel(
        [ModelStep(output=[function_call("delete_file", {"path": "old.log"}, call_id="c-1")])]
    )
    agent = Agent(name="Host", model=asks, tools=[delete_file])
    async with HelixRun(store, session_id, user_id="ada") as run:
        result = await Runner.run(agent, "Clean up", session=run.session, run_config=run.run_config)
        pending = await run.pause(result)
    print("pending:", [(p.approval_id.split(":")[1], p.tool_name, p.input) for p in pending])
    # A restart: another interpreter decides and resumes; this one only waits for it.
    child = await asyncio.create_subprocess_exec(
        sys.executable, __file__, url, "--decide", session_id, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await child.communicate()
    if child.returncode:
        raise SystemExit(f"the second process failed ({child.returncode})")
    print(out.decode(), end="")
    info = await store.get_session(session_id)
    assert info is not None and info.current_run is not None
    print(
        f"back in the first process: run {info.current_run.status}, "
        f"{info.message_count} rows, "
        f"{len(await store.list_pending_approvals(session_id))} pending approvals"
    )


async def decide(url: str, session_id: str) -> None:
    """The second process: list, resolve twice, resume."""
    async with open_store(url) as store:
        [pending] = await store.list_pending_approvals(session_id)
        print(f"[second process] listed: {pending.tool_name} {pending.input}")
        for approve in (True, False):
            answer = await decide_approval(store, session_id, pending.approval_id, approve=approve)
            print(f"[second process] decide approve={approve}: {answer}")
        model = ScriptedModel([ModelStep(output=[assistant_message("Deleted old.log.")])])
        agent = Agent(name="Host", model=model, tools=[delete_file])
        async with HelixRun(store, session_id, resume=True) as run:
            state = await run.resume_state(agent)
            result = await Runner.run(agent, state, session=run.session, run_config=run.run_config)
        tool_output = model.calls[0].input[-1]
        print(
            f"[second process] tool ran: {tool_output.get('output')!r}; "
            f"agent> {result.final_output}"
        )


@function_tool
def server_log() -> str:
    """The server's log (40,000 characters)."""
    return "\n".join(
        "00377 ERROR disk full" if n == 377 else f"{n:05d} ok " + "." * 70 for n in range(500)
    )


@function_tool
def restart_service(name: str) -> str:
    """Restart a service."""
    return f"{name} restarted"


async def strategies(store: SessionStateStore, session_id: str) -> None:
    print("\n== 4. dynamic: a large output offloaded and read back; a tool source activated")

    def read_back(call: ModelCall) -> list[Any]:
        summary = str(call.input[-1]["output"])
        print("model saw:", summary.splitlines()[0])
        output_id = "out-" + summary.split("out-", 1)[1].split()[0]
        return [
            function_call(
                "read_tool_output", {"output_id": output_id, "grep": "ERROR"}, call_id="c-2"
            )
        ]

    def activate(call: ModelCall) -> list[Any]:
        print(
            "read back:",
            [line for line in str(call.input[-1]["output"]).splitlines() if "ERROR" in line],
        )
        print("offered:", sorted(t.name for t in call.tools))
        return [function_call("activate_tool_source", {"source_name": "ops"}, call_id="c-3")]

    def restart(call: ModelCall) -> list[Any]:
        print("offered after the activation:", sorted(t.name for t in call.tools))
        return [function_call("restart_service", {"name": "db"}, call_id="c-4")]

    model = ScriptedModel(
        [
            ModelStep(output=[function_call("server_log", {}, call_id="c-1")]),
            ModelStep.respond(read_back),
            ModelStep.respond(activate),
            ModelStep.respond(restart),
            ModelStep(output=[assistant_message("Freed the disk, restarted db.")]),
        ]
    )
    sources = {"ops": [restart_service]}
    async with HelixRun(store, session_id, strategy="dynamic", tool_sources=sources) as run:
        agent = Agent(name="Ops", model=model, tools=[server_log, *run.tools])
        result = await Runner.run(agent, "Fix it", session=run.session, run_config=run.run_config)
    print("agent>", result.final_output)
    later = ScriptedModel([ModelStep(output=[assistant_message("All good.")])])
    async with HelixRun(store, session_id, tool_sources=sources) as run:  # a restart
        agent = Agent(name="Ops", model=later, tools=[server_log, *run.tools])
        await Runner.run(agent, "Status?", session=run.session, run_config=run.run_config)
    print(
        f"next run: strategy {run.strategy}, offered:", sorted(t.name for t in later.calls[0].tools)
    )


class OfflineCompactor:
    """A stand-in for the Responses API's ``responses.compact``: it answers with one
    opaque ``compaction`` item, as the API does, without the network."""

    def __init__(self) -> None:
        self.responses = SimpleNamespace(compact=self.compact)

    async def compact(self, **_: Any) -> SimpleNamespace:
        summary = {"type": "compaction", "id": "cmp-1", "encrypted_content": "(summary)"}
        return SimpleNamespace(output=[summary])


async def compaction(store: SessionStateStore, session_id: str) -> None:
    print("\n== 5. hybrid: the SDK compacts the history; recall_history still finds it")
    model = ScriptedModel([ModelStep(output=[assistant_message("Noted: XK-4471.")])])
    async with HelixRun(store, session_id, strategy="hybrid") as run:
        agent = Agent(name="Ops", model=model)
        prompt = "The deploy token is XK-4471."
        await Runner.run(agent, prompt, session=run.session, run_config=run.run_config)
        compacting = OpenAIResponsesCompactionSession(
            session_id, run.session, client=cast(Any, OfflineCompactor())
        )
        await compacting.run_compaction({"force": True})
        items: list[Any] = await run.session.get_items()
        print("history after the compaction:", [item["type"] for item in items])

    def recall(call: ModelCall) -> list[Any]:
        return [function_call("recall_history", {"grep": "XK-"}, call_id="c-1")]

    def found(call: ModelCall) -> list[Any]:
        print("recalled:", str(call.input[-1]["output"]).splitlines())
        return [assistant_message("It was XK-4471.")]

    later = ScriptedModel([ModelStep.respond(recall), ModelStep.respond(found)])
    async with HelixRun(store, session_id) as run:
        agent = Agent(name="Ops", model=later, tools=run.tools)
        result = await Runner.run(
            agent, "What was the token?", session=run.session, run_config=run.run_config
        )
    print("agent>", result.final_output)


async def main(url: str) -> None:
    """The five parts, each on a session of its own."""
    set_tracing_disabled(True)  # nothing leaves the machine
    tag = uuid.uuid4().hex[:8]
    async with open_store(url) as store:
        await memories(store, f"features-memory-{tag}")
        await two_runners(store, f"features-runners-{tag}")
        await approval(url, store, f"features-approval-{tag}")
        await strategies(store, f"features-strategies-{tag}")
        await compaction(store, f"features-compaction-{tag}")


if __name__ == "__main__":
    set_tracing_disabled(True)
    args = sys.argv[1:]
    target = args[0] if args else "sqlite:///helix-openai-features.db"
    if "--decide" in args:
        asyncio.run(decide(target, args[args.index("--decide") + 1]))
    else:
        asyncio.run(main(target))
