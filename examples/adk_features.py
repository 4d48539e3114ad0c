"""What the store adds to a Google ADK runner, end to end, through ``HelixPlugin``.

Run it with ``uv run python examples/adk_features.py [STORE_URL]`` (default: a SQLite
file; a ``postgresql://`` URL works the same). It needs no network: a scripted model (a
``BaseLlm`` answering from a list) stands in for Gemini. It shows:

1. a memory the app records reaches the next model call, delivered exactly once;
2. a second runner on the session supersedes the first, whose writes are refused, and
   the first one's tool answer, arriving late, reaches the next run as a notice;
3. a tool confirmation becomes a pending approval; a *second process* (this script,
   started again with ``--decide``) lists it, resolves it (a second resolve says
   ``already-resolved``) and resumes the invocation there;
4. under ``dynamic``, a 40,000-character tool result reaches the model as its summary and
   is read back with ``read_tool_output(grep=...)``; a tool source is activated; a later
   run (a restart) keeps the strategy and the activation, and ``recall_history`` finds
   what was done.

See docs/integrations/adk.md.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncGenerator, Callable
from datetime import UTC, datetime
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.tools.function_tool import FunctionTool
from google.genai import types
from pydantic import Field

from helix_agents.adk import (
    STRATEGY_KEY,
    HelixPlugin,
    decide_approval,
    resume_message,
    session_key,
)
from helix_agents.core import (
    ContextItem,
    RunSupersededError,
    SessionStateStore,
    StoredContextItem,
    open_store,
)

APP, USER = "features", "ada"
Step = types.Part | Callable[[LlmRequest], types.Part]


def say(text: str) -> types.Part:
    """A text answer."""
    return types.Part(text=text)


def call(name: str, args: dict[str, Any], call_id: str) -> types.Part:
    """A function call."""
    return types.Part(function_call=types.FunctionCall(name=name, args=args, id=call_id))


class ScriptedModel(BaseLlm):
    """A stand-in model: answers each call with the next step, and keeps the requests."""

    model: str = "scripted"
    steps: list[Any] = Field(default_factory=list)
    requests: list[LlmRequest] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """One response: the next step of the script."""
        self.requests.append(llm_request)
        step = self.steps.pop(0)
        part = step(llm_request) if callable(step) else step
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def scripted(*steps: Step) -> ScriptedModel:
    """A model answering ``steps`` in order."""
    return ScriptedModel(steps=list(steps), requests=[])


def result_text(request: LlmRequest) -> str:
    """The ``result`` of the function response the model was last given."""
    parts = request.contents[-1].parts or []
    response = parts[0].function_response if parts else None
    return str(((response and response.response) or {}).get("result", ""))


def context_lines(model: ScriptedModel) -> list[str]:
    """The hidden context the model was shown on its last call, one line each."""
    texts = [p.text for c in model.requests[-1].contents for p in c.parts or () if p.text]
    return [t.replace("\n", " ") for t in texts if t.startswith("<context")]


async def run_once(
    plugin: HelixPlugin, agent: LlmAgent, session_id: str, text: str | types.Content
) -> str:
    """One ``run_async`` invocation: its last text."""
    app = App(name=APP, root_agent=agent, plugins=[plugin])
    runner = Runner(app=app, session_service=plugin.session_service)
    message = (
        text if isinstance(text, types.Content) else types.Content(role="user", parts=[say(text)])
    )
    said = ""
    async for event in runner.run_async(user_id=USER, session_id=session_id, new_message=message):
        parts = event.content.parts if event.content and event.content.parts else []
        said = next((p.text for p in parts if p.text), said)
    return said


async def memories(store: SessionStateStore, session_id: str) -> None:
    print("== 1. a memory reaches the model, delivered once")
    plugin = HelixPlugin(store)
    await plugin.session_service.create_session(app_name=APP, user_id=USER, session_id=session_id)
    sid = session_key(APP, USER, session_id)
    memory = ContextItem(kind="memory", content="Ada prefers tea.", memory_ids=["m-1"])
    await store.record_context_item(
        sid, StoredContextItem(key="m-1", item=memory, at=datetime.now(UTC))
    )
    model = scripted(say("Tea, then."), say("Still tea."))
    agent = LlmAgent(name="host", model=model)
    print("agent>", await run_once(plugin, agent, session_id, "Something to drink?"))
    print("model saw:", context_lines(model))
    print("still queued:", len(await store.list_undelivered_context_items(sid)))
    await run_once(plugin, agent, session_id, "And later?")
    print("next run, model saw (from the history):", context_lines(model))


async def two_runners(store: SessionStateStore, session_id: str) -> None:
    print("\n== 2. two runners: the newer one wins; the older one's tool answers late")
    plugin = HelixPlugin(store)
    await plugin.session_service.create_session(app_name=APP, user_id=USER, session_id=session_id)
    started, release = asyncio.Event(), asyncio.Event()

    async def slow_search(query: str) -> str:
        """Search for ``query`` (slowly)."""
        started.set()
        await release.wait()
        return f"3 results for {query}"

    slow = scripted(call("slow_search", {"query": "tea"}, "call-search"))
    first = asyncio.ensure_future(
        run_once(plugin, LlmAgent(name="host", model=slow, tools=[slow_search]), session_id, "Go")
    )
    await started.wait()
    quick = LlmAgent(name="host", model=scripted(say("Hi!")))
    print("second runner>", await run_once(plugin, quick, session_id, "Hello?"))
    release.set()
    try:
        await first
    except RunSupersededError as exc:
        print(f"first runner refused: {exc.code}")
    sid = session_key(APP, USER, session_id)
    late = await store.list_undelivered_late_answers(sid)
    print("queued late answers:", [(a.call_id, a.output) for a in late])
    model = scripted(say("Noted."))
    await run_once(plugin, LlmAgent(name="host", model=model), session_id, "Anything new?")
    print("next run, model saw:", context_lines(model)[-1:])


def delete_file(path: str) -> str:
    """Delete ``path`` (pretend)."""
    return f"deleted {path}"


async def approval(url: str, store: SessionStateStore, session_id: str) -> None:
    print("\n== 3. a tool confirmation, decided and resumed in a second process")
    plugin = HelixPlugin(store)
    await plugin.session_service.create_session(app_name=APP, user_id=USER, session_id=session_id)
    tool = FunctionTool(delete_file, require_confirmation=True)
    asks = scripted(call("delete_file", {"path": "old.log"}, "c-1"))
    await run_once(plugin, LlmAgent(name="host", model=asks, tools=[tool]), session_id, "Clean up")
    sid = session_key(APP, USER, session_id)
    pending = await store.list_pending_approvals(sid)
    print("pending:", [(p.tool_call_id, p.tool_name, p.input) for p in pending])
    # A restart: another interpreter decides and resumes; this one only waits for it.
    child = await asyncio.create_subprocess_exec(
        sys.executable, __file__, url, "--decide", session_id, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await child.communicate()
    if child.returncode:
        raise SystemExit(f"the second process failed ({child.returncode})")
    print(out.decode(), end="")
    info = await store.get_session(sid)
    assert info is not None and info.current_run is not None
    print(
        f"back in the first process: run {info.current_run.status}, "
        f"{len(await store.list_pending_approvals(sid))} pending approvals"
    )


async def decide(url: str, session_id: str) -> None:
    """The second process: list, resolve twice, resume."""
    sid = session_key(APP, USER, session_id)
    async with open_store(url) as store:
        [pending] = await store.list_pending_approvals(sid)
        print(f"[second process] listed: {pending.tool_name} {pending.input}")
        for confirmed in (True, False):
            answer = await decide_approval(store, sid, pending.approval_id, confirmed=confirmed)
            print(f"[second process] decide confirmed={confirmed}: {answer}")
        model = scripted(say("Deleted old.log."))
        tool = FunctionTool(delete_file, require_confirmation=True)
        agent = LlmAgent(name="host", model=model, tools=[tool])
        said = await run_once(
            HelixPlugin(store), agent, session_id, await resume_message(store, sid)
        )
        ran = result_text(model.requests[0])
        print(f"[second process] tool ran: {ran!r}; agent> {said}")


def server_log() -> str:
    """The server's log (40,000 characters)."""
    return "\n".join(
        "00377 ERROR disk full" if n == 377 else f"{n:05d} ok " + "." * 70 for n in range(500)
    )


def restart_service(name: str) -> str:
    """Restart a service."""
    return f"{name} restarted"


def offered(request: LlmRequest) -> list[str]:
    """The names of the tools a request offers."""
    return sorted(request.tools_dict)


async def strategies(store: SessionStateStore, session_id: str) -> None:
    print("\n== 4. dynamic: a large result offloaded and read back; a tool source activated")
    sources = {"ops": [restart_service]}
    plugin = HelixPlugin(store, strategy="dynamic", tool_sources=sources)
    await plugin.session_service.create_session(app_name=APP, user_id=USER, session_id=session_id)

    def read_back(request: LlmRequest) -> types.Part:
        summary = result_text(request)
        print("model saw:", summary.splitlines()[0])
        output_id = "out-" + summary.split("out-", 1)[1].split()[0]
        return call("read_tool_output", {"output_id": output_id, "grep": "ERROR"}, "c-2")

    def activate(request: LlmRequest) -> types.Part:
        text = result_text(request)
        print("read back:", [line for line in text.splitlines() if "ERROR" in line])
        print("offered:", offered(request))
        return call("activate_tool_source", {"source_name": "ops"}, "c-3")

    def restart(request: LlmRequest) -> types.Part:
        print("offered after the activation:", offered(request))
        return call("restart_service", {"name": "db"}, "c-4")

    model = scripted(call("server_log", {}, "c-1"), read_back, activate, restart, say("Fixed."))
    agent = LlmAgent(name="ops", model=model, tools=[server_log, *plugin.tools])
    print("agent>", await run_once(plugin, agent, session_id, "What broke?"))
    later = HelixPlugin(store, tool_sources=sources)  # a restart: no strategy given

    def recalled(request: LlmRequest) -> types.Part:
        hits = result_text(request)
        print("recalled:", [line for line in hits.splitlines() if "broke" in line][:1])
        print("next run offers:", offered(request))
        return say("All good.")

    model = scripted(call("recall_history", {"grep": "broke"}, "c-5"), recalled)
    agent = LlmAgent(name="ops", model=model, tools=[server_log, *later.tools])
    await run_once(later, agent, session_id, "What did we do?")
    kept = await store.get_scoped_state("session", session_key(APP, USER, session_id))
    print("next run: strategy", kept[STRATEGY_KEY])


async def main(url: str) -> None:
    """The four parts, each on a session of its own."""
    tag = uuid.uuid4().hex[:8]
    async with open_store(url) as store:
        await memories(store, f"memory-{tag}")
        await two_runners(store, f"runners-{tag}")
        await approval(url, store, f"approval-{tag}")
        await strategies(store, f"strategies-{tag}")


if __name__ == "__main__":
    args = sys.argv[1:]
    target = args[0] if args else "sqlite:///helix-adk-features.db"
    if "--decide" in args:
        asyncio.run(decide(target, args[args.index("--decide") + 1]))
    else:
        asyncio.run(main(target))
