"""EXP-15: the repository's own examples as a corpus. Each runs offline, as a user runs it,
into one SQLite file; their next turn is played with their own code on the store the
file was moved to (docs/export.md)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from agents import Agent, RunConfig, Runner
from agents.testing import ModelStep, ScriptedModel
from google.adk.agents import LlmAgent
from google.adk.runners import Runner as AdkRunner
from google.genai import types

from helix_agents.adk import HelixSessionService
from helix_agents.core import ChatMessage, MessageCommit, SessionStateStore, StartRun
from helix_agents.core.transfer._restore import engine_of
from helix_agents.langgraph import HelixCheckpointSaver
from helix_agents.openai_agents import HelixSession

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
DEMO_DB = "helix-demo.db"  # where examples/agent_loop.py writes, in its working directory
PENDING, RESUMED = "lg-pending", "lg-resumed"  # LangGraph threads: interrupted, approved


def example(name: str) -> ModuleType:
    """``examples/<name>.py`` as a module (its ``main`` is not run)."""
    spec = importlib.util.spec_from_file_location(f"helix_example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_examples(workdir: Path) -> Path:
    """Run the demo, the long run, the ADK, OpenAI Agents and LangGraph examples into
    ``workdir/helix-demo.db``, each in a process of its own, side by side (SQLite takes
    writers from several processes)."""
    db = workdir / DEMO_DB
    url = f"sqlite:///{db}"
    runs = [
        ["agent_loop.py"],
        ["long_run.py", str(db)],
        ["adk_agent.py", str(db)],
        ["openai_agents_chat.py", str(db)],
        ["langgraph_resume.py", url, PENDING, "start"],
        ["langgraph_resume.py", url, RESUMED, "both"],
    ]
    procs = [
        (
            script,
            subprocess.Popen(
                [sys.executable, str(EXAMPLES / script), *args],
                cwd=workdir,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            ),
        )
        for script, *args in runs
    ]
    for script, proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"examples/{script}: {err}"
    return db


async def adapter_view(store: SessionStateStore) -> dict[str, Any]:
    """What the ADK, LangGraph and OpenAI Agents adapters read of the examples' sessions."""
    adk = example("adk_agent")
    session = await HelixSessionService(store).get_session(
        app_name=adk.APP, user_id=adk.USER, session_id=adk.SESSION
    )
    assert session is not None
    lg = example("langgraph_resume")
    threads = {}
    for thread in (PENDING, RESUMED):
        graph = lg.build_graph(HelixCheckpointSaver(store))
        state = await graph.aget_state({"configurable": {"thread_id": thread}})
        threads[thread] = {
            "messages": [(m.type, m.content) for m in state.values["messages"]],
            "next": state.next,
            "interrupts": [i.value for i in state.interrupts],
        }
    oa = example("openai_agents_chat")
    return {
        "adk": session.model_dump(mode="json"),
        "langgraph": threads,
        "openai": await HelixSession(oa.SESSION, store, user_id=oa.USER).get_items(),
    }


async def examples_next_turn(store: SessionStateStore, url: str) -> None:
    """Each example's next step, with its own code, on ``store`` (at ``url``)."""
    await _demo_turn(store)
    await _long_run_turn(store)
    await _adk_turn(store)
    await _openai_turn(store)
    # The interrupted LangGraph thread is approved, by the example's own resume step.
    lg = example("langgraph_resume")
    await lg.resume(url, PENDING, None, "approve")
    graph = lg.build_graph(HelixCheckpointSaver(store))
    state = await graph.aget_state({"configurable": {"thread_id": PENDING}})
    assert not state.interrupts and state.values["messages"][-1].type == "ai"


async def _demo_turn(store: SessionStateStore) -> None:
    demo = example("agent_loop")
    # trip-1, or trip-2 when another example made a session of ada's first
    sid = next(
        s.id
        for s in (await store.list_all_sessions(first=50)).sessions
        if s.title == "Weekend in Lyon"
    )
    assert await store.resolve_approval(sid, "approve-train") == "already-resolved"
    question = ChatMessage(role="user", content="And the weather on Sunday?")
    await store.append_messages(
        sid, MessageCommit(messages=(question,), start_run=StartRun(run_id="run-4"))
    )
    before = await store.get_message_count(sid)
    count = await demo.append(
        store, sid, "run-4", demo.scripted_model(await store.get_messages(sid))
    )
    assert count == before + 1
    assert await store.list_undelivered_late_answers(sid) == []
    assert await store.list_undelivered_context_items(sid) == []


async def _long_run_turn(store: SessionStateStore) -> None:
    lr = example("long_run")
    sid = next(
        s.id
        for s in (await store.list_all_sessions(first=50)).sessions
        if s.user_id == "ada" and s.message_count > lr.RETAIN
    )
    window = await store.get_window(sid)  # type: ignore[attr-defined]
    assert window.summary is not None and window.preserved
    count = await store.get_message_count(sid)
    await lr.append(store, sid, lr.turn(99))
    await lr.compact_if_needed(store, sid, lr.resolve_strategy("Dynamic", None))
    assert await store.get_message_count(sid) == count + 4
    dump = await (await engine_of(store)).dump(sid)
    assert dump is not None and len(dump.outputs) == 1
    found = await lr.read_tool_output(store, sid, dump.outputs[0][0].output_id, grep=r"FAILED")
    assert "FAILED" in found
    recalled = await lr.recall_history(store, sid, grep=r"deploy token is \S+")
    assert re.search(r"XK-4471", recalled)  # from the archive, before the first compaction


async def _adk_turn(store: SessionStateStore) -> None:
    adk = example("adk_agent")
    service = HelixSessionService(store)
    runner = AdkRunner(app_name=adk.APP, agent=_adk_agent(adk), session_service=service)
    before = await service.get_session(app_name=adk.APP, user_id=adk.USER, session_id=adk.SESSION)
    assert before is not None
    message = types.Content(role="user", parts=[types.Part(text="Where am I going?")])
    async for _ in runner.run_async(user_id=adk.USER, session_id=adk.SESSION, new_message=message):
        pass
    after = await service.get_session(app_name=adk.APP, user_id=adk.USER, session_id=adk.SESSION)
    assert after is not None and len(after.events) > len(before.events)
    for key in ("destination", "user:home_trips", "app:cities_seen"):
        assert after.state[key] == before.state[key]


def _adk_agent(adk: ModuleType) -> LlmAgent:
    return LlmAgent(name="planner", model=adk.ScriptedModel(), tools=[adk.remember_city])


async def _openai_turn(store: SessionStateStore) -> None:
    oa = example("openai_agents_chat")
    session = HelixSession(oa.SESSION, store, user_id=oa.USER)
    before = await session.get_items()
    agent = Agent(
        name="Forecaster",
        model=ScriptedModel([ModelStep.respond(oa.reply)]),
        tools=[oa.get_weather],
    )
    # As the example does: no trace leaves the machine (per run, not process-wide).
    config = RunConfig(tracing_disabled=True)
    result = await Runner.run(agent, "What did I ask you?", session=session, run_config=config)
    assert "You have asked me 3 things" in str(result.final_output)
    after = await session.get_items()
    assert after[: len(before)] == before and len(after) == len(before) + 2
