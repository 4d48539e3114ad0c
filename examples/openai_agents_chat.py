"""An OpenAI Agents SDK chat loop whose history lives in a helix-agents SQLite store.

Run it with ``uv run python examples/openai_agents_chat.py [DB_PATH]``. It
needs no network: the SDK's test model (``agents.testing.ScriptedModel``)
stands in for a real model, calling the ``get_weather`` tool when asked about
the weather and answering from the tool's output. Each turn goes through
``Runner.run(..., session=...)`` with a ``HelixSession``; run it again and the
conversation continues from the file.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from agents import Agent, Runner, function_tool
from agents.items import TResponseOutputItem
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from agents.tracing import set_tracing_disabled

from helix_agents.core import open_store, session_handle
from helix_agents.core.handles import user_sessions
from helix_agents.openai_agents import ITEM_FIELD, HelixSession

USER = "ada"
SESSION = "ada-weather-chat"
QUESTIONS = ("What is the weather in Paris?", "What did I ask you?")


@function_tool
def get_weather(city: str) -> str:
    """Today's weather in ``city`` (made up, the same every time)."""
    return f"sunny and 21 °C in {city}"


def reply(call: ModelCall) -> list[TResponseOutputItem]:
    """The stand-in model's answer to the input it was called with (history included)."""
    items: list[Any] = call.input
    last, n = items[-1], len(items)
    if last.get("type") == "function_call_output":
        return [assistant_message(f"It is {last['output']}.", item_id=f"msg_{n}")]
    if "weather" in str(last.get("content", "")).lower():
        city = str(last["content"]).rstrip("?").split()[-1]
        return [function_call("get_weather", {"city": city}, call_id=f"call_{n}")]
    asked = [i["content"] for i in items if i.get("role") == "user"]
    text = f"You have asked me {len(asked)} things; the first was {asked[0]!r}."
    return [assistant_message(text, item_id=f"msg_{n}")]


async def main(db_path: str) -> None:
    """Two turns of chat, then what the store holds for the user."""
    set_tracing_disabled(True)  # nothing leaves the machine
    # One model call per step: the weather question takes two (the tool call, the answer).
    model = ScriptedModel([ModelStep.respond(reply) for _ in range(3)])
    agent = Agent(name="Forecaster", model=model, tools=[get_weather])
    async with open_store(f"sqlite:///{db_path}") as store:
        session = HelixSession(SESSION, store, user_id=USER)
        for question in QUESTIONS:
            result = await Runner.run(agent, question, session=session)
            print(f"user> {question}\nagent> {result.final_output}")
        print("\nstored rows (role: item type):")
        for row in await session_handle(store, SESSION).messages():
            item = json.loads(str((row.model_extra or {})[ITEM_FIELD]))
            print(f"  {row.role:9} {item.get('type', 'message')}")
        page = await user_sessions(store, USER)
        for summary in page.sessions:
            print(f"\n{USER}'s session {summary.id}: {summary.message_count} rows")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "helix-openai-demo.db"))
