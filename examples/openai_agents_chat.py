"""An OpenAI Agents SDK chat loop whose history lives in a helix-agents SQLite store.

Run it with ``uv run python examples/openai_agents_chat.py [DB_PATH]``. It
needs no network: ``OfflineModel`` stands in for a real model, calling the
``get_weather`` tool when asked about the weather and answering from the
tool's output. Each turn goes through ``Runner.run(..., session=...)`` with a
``HelixSession``; run it again and the conversation continues from the file.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, ModelResponse, Runner, TResponseInputItem, Usage, function_tool
from agents.models.interface import Model
from agents.tracing import set_tracing_disabled
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseStreamEvent,
)

from helix_agents.core import open_store
from helix_agents.openai_agents import ITEM_FIELD, HelixSession

USER = "ada"
SESSION = "ada-weather-chat"


@function_tool
def get_weather(city: str) -> str:
    """Today's weather in ``city`` (made up, the same every time)."""
    return f"sunny and 21 °C in {city}"


class OfflineModel(Model):
    """A stand-in model: asks for the weather tool, then answers from its output."""

    def __init__(self) -> None:
        self.calls = 0

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        *a: Any,
        **k: Any,
    ) -> ModelResponse:
        self.calls += 1
        items: list[Any] = [{"role": "user", "content": input}] if isinstance(input, str) else input
        last = items[-1]
        if last.get("type") == "function_call_output":
            reply = f"It is {last['output']}."
        elif "weather" in str(last.get("content", "")).lower():
            city = str(last["content"]).rstrip("?").split()[-1]
            call = ResponseFunctionToolCall(
                id=f"fc_{self.calls}",
                call_id=f"call_{self.calls}",
                type="function_call",
                name="get_weather",
                arguments=json.dumps({"city": city}),
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        else:
            asked = [i["content"] for i in items if isinstance(i, dict) and i.get("role") == "user"]
            reply = f"You have asked me {len(asked)} things; the first was {asked[0]!r}."
        text = ResponseOutputText(text=reply, type="output_text", annotations=[])
        message = ResponseOutputMessage(
            id=f"msg_{self.calls}",
            type="message",
            role="assistant",
            status="completed",
            content=[text],
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[ResponseStreamEvent]:
        raise NotImplementedError("this example runs Runner.run, not Runner.run_streamed")


async def main(db_path: str) -> None:
    """Two turns of chat, then what the store holds for the user."""
    set_tracing_disabled(True)  # nothing leaves the machine
    agent = Agent(name="Forecaster", model=OfflineModel(), tools=[get_weather])
    async with open_store(f"sqlite:///{db_path}") as store:
        session = HelixSession(SESSION, store, user_id=USER)
        for question in ("What is the weather in Paris?", "What did I ask you?"):
            result = await Runner.run(agent, question, session=session)
            print(f"user> {question}\nagent> {result.final_output}")
        print("\nstored rows (role: item type):")
        for row in await store.get_messages(SESSION):
            item = json.loads(str((row.model_extra or {})[ITEM_FIELD]))
            print(f"  {row.role:9} {item.get('type', 'message')}")
        page = await store.list_sessions(USER)
        for summary in page.sessions:
            print(f"\n{USER}'s session {summary.id}: {summary.message_count} rows")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "helix-openai-demo.db"))
