"""A Google ADK agent whose sessions live in a helix-agents SQLite store.

Run it with ``uv run python examples/adk_agent.py [DB_PATH]``. It needs no network:
``ScriptedModel`` stands in for Gemini, calling the ``remember_city`` tool when told a
city and answering from the state otherwise. The tool writes state in all three scopes
(``app:`` for every user, ``user:`` for this user's sessions, plain keys for this
session); each event and its state change land in one commit. Run it again and the
session resumes from the file: the events, the session's state and the shared state.
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
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from helix_agents.adk import HelixSessionService
from helix_agents.core import open_store

APP = "travel"
USER = "ada"
SESSION = "ada-trip"


def remember_city(city: str, tool_context: ToolContext) -> str:
    """Remember ``city`` as the trip's destination."""
    state = tool_context.state
    state["destination"] = city  # this session
    state["user:home_trips"] = state.get("user:home_trips", 0) + 1  # every session of the user
    state["app:cities_seen"] = sorted({*state.get("app:cities_seen", []), city})  # every user
    return f"noted {city}"


class ScriptedModel(BaseLlm):
    """A stand-in model: calls the tool for "I go to X", then answers from the state."""

    model: str = "scripted"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """One response: a tool call, or text built from what the request holds."""
        last = llm_request.contents[-1]
        part = last.parts[0] if last.parts else types.Part()
        if part.function_response is not None:
            reply = f"Done: {(part.function_response.response or {})['result']}."
        elif part.text and part.text.startswith("I go to "):
            call = types.FunctionCall(name="remember_city", args={"city": part.text[8:]})
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(function_call=call)])
            )
            return
        else:
            turns = sum(
                1 for c in llm_request.contents if c.role == "user" and c.parts and c.parts[0].text
            )
            reply = f"This is turn {turns} of our talk."
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=reply)]))


async def main(db_path: str) -> None:
    """Two turns on the session (created on the first run, resumed on later ones)."""
    agent = LlmAgent(name="planner", model=ScriptedModel(), tools=[remember_city])
    async with open_store(f"sqlite:///{db_path}") as store:
        service = HelixSessionService(store)
        runner = Runner(app_name=APP, agent=agent, session_service=service)
        if await service.get_session(app_name=APP, user_id=USER, session_id=SESSION) is None:
            await service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
            print("new session")
        else:
            print("resumed session")
        for text in ("I go to Lyon", "Where am I going?"):
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for event in runner.run_async(
                user_id=USER, session_id=SESSION, new_message=message
            ):
                if event.content and event.content.parts and event.content.parts[0].text:
                    print(f"{event.author}> {event.content.parts[0].text}")
        session = await service.get_session(app_name=APP, user_id=USER, session_id=SESSION)
        assert session is not None
        print(f"events: {len(session.events)}")
        for key in ("destination", "user:home_trips", "app:cities_seen"):
            print(f"state {key} = {session.state[key]!r}")
        other = await service.create_session(app_name=APP, user_id="bob")
        print(f"bob sees app:cities_seen = {other.state.get('app:cities_seen')!r}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "adk_agent.db"))
