"""A Google ADK agent whose artifacts and memory live in a helix-agents store.

Run it with ``uv run python examples/adk_artifacts_memory.py [URL]`` (a store URL, e.g.
``postgresql://…?auto_migrate=true``; a bare path is a SQLite file, by default
``adk_artifacts_memory.db``). It needs no
network: ``ScriptedModel`` stands in for Gemini. On Monday the agent saves the user's
packing list as a ``user:`` artifact through its tool, and the session goes to memory.
On Friday, in a new session, ADK's own ``load_memory`` tool finds Monday's words through
``search_memory``, and the artifact is there too: sessions, artifacts and memory share
one store.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.tools.load_memory_tool import load_memory_tool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from pydantic import BaseModel

from helix_agents.adk import HelixArtifactService, HelixMemoryService, HelixSessionService
from helix_agents.core import open_store

APP = "travel"
USER = "ada"


async def save_packing_list(items: str, tool_context: ToolContext) -> str:
    """Save ``items`` as the user's packing list, an artifact every session sees."""
    version = await tool_context.save_artifact("user:packing.txt", types.Part(text=items))
    return f"saved user:packing.txt version {version}"


def _call(name: str, **args: str) -> LlmResponse:
    call = types.FunctionCall(name=name, args=args)
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


class ScriptedModel(BaseLlm):
    """A stand-in model: saves a list it is given, loads memory when asked to recall."""

    model: str = "scripted"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """One response: a tool call, or text built from the tool's result."""
        last = llm_request.contents[-1]
        part = last.parts[0] if last.parts else types.Part()
        if part.text and part.text.startswith("Save my packing list: "):
            yield _call("save_packing_list", items=part.text.removeprefix("Save my packing list: "))
            return
        if part.text and part.text.startswith("What was on my packing list"):
            yield _call("load_memory", query="packing list")
            return
        response = part.function_response
        result = (response.response or {}).get("result") if response else None
        if response is not None and response.name == "load_memory":
            # The tool's LoadMemoryResponse (its JSON form once the session is read back).
            found = result.model_dump(mode="json") if isinstance(result, BaseModel) else result
            memories = found["memories"] if isinstance(found, dict) else []
            texts = [p["text"] for m in memories for p in m["content"]["parts"] if p.get("text")]
            reply = f"From memory: {texts[0] if texts else 'nothing'}"
        else:
            reply = f"Done: {result}."
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=reply)]))


async def turn(runner: Runner, session_id: str, text: str) -> None:
    """Send ``text`` in ``session_id`` and print the agent's text replies."""
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for event in runner.run_async(user_id=USER, session_id=session_id, new_message=message):
        if event.content and event.content.parts and event.content.parts[0].text:
            print(f"{event.author}> {event.content.parts[0].text}")


async def main(url: str) -> None:
    """Monday: save a list, archive the session. Friday: recall it from memory."""
    agent = LlmAgent(
        name="packer", model=ScriptedModel(), tools=[save_packing_list, load_memory_tool]
    )
    async with open_store(url if "://" in url else f"sqlite:///{url}") as store:
        sessions = HelixSessionService(store)
        artifacts = HelixArtifactService(store)
        memory = HelixMemoryService(store)
        runner = Runner(
            app_name=APP,
            agent=agent,
            session_service=sessions,
            artifact_service=artifacts,
            memory_service=memory,
        )
        monday = await sessions.create_session(app_name=APP, user_id=USER)
        await turn(runner, monday.id, "Save my packing list: passport, charger, sunscreen")
        archived = await sessions.get_session(app_name=APP, user_id=USER, session_id=monday.id)
        assert archived is not None
        await memory.add_session_to_memory(archived)
        print(f"archived {len(archived.events)} events of monday")

        friday = await sessions.create_session(app_name=APP, user_id=USER)
        await turn(runner, friday.id, "What was on my packing list on Monday?")
        keys = await artifacts.list_artifact_keys(app_name=APP, user_id=USER, session_id=friday.id)
        print(f"friday's artifacts: {keys}")
        saved = await artifacts.load_artifact(
            app_name=APP, user_id=USER, session_id=friday.id, filename="user:packing.txt"
        )
        print(f"user:packing.txt = {saved.text if saved else None!r}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "adk_artifacts_memory.db"))
