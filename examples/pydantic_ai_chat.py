"""A pydantic-ai agent keeps its conversation in a helix-agents store across a restart.

Run it with ``uv run python examples/pydantic_ai_chat.py [DB_PATH]``; it is offline: the
model is a ``FunctionModel`` that calls a ``weather`` tool and remembers what it was
asked. The first process runs two turns and saves each run's new messages to a SQLite
file; a second process (a restart) loads the history from that file and continues the
conversation. Two runs that load the same history and both save: the second save is
refused (``MessageCountConflictError``) and the store keeps the first run's messages.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from helix_agents.core import MessageCountConflictError, open_store
from helix_agents.pydantic_ai import HelixHistory


def _prompts(messages: list[ModelMessage]) -> list[str]:
    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and isinstance(part.content, str)
    ]


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Calls ``weather`` for "weather in X", reports its answer, and recalls past prompts."""
    last = messages[-1].parts[-1]
    if isinstance(last, ToolReturnPart):
        return ModelResponse(parts=[TextPart(f"It is {last.content}.")])
    prompt = _prompts(messages)[-1]
    if prompt.startswith("weather in "):
        return ModelResponse(parts=[ToolCallPart("weather", {"city": prompt[11:]})])
    earlier = _prompts(messages)[:-1]
    return ModelResponse(parts=[TextPart(f"You asked: {'; '.join(earlier) or 'nothing yet'}.")])


agent = Agent(FunctionModel(model))


@agent.tool_plain
def weather(city: str) -> str:
    """The weather in ``city``."""
    return f"sunny in {city}"


async def turn(url: str, prompt: str) -> None:
    """One run: load the history, run the agent on it, save the run's new messages."""
    async with open_store(url) as store:
        history = HelixHistory(store, "chat-1", user_id="ada")
        await history.load()
        result = await agent.run(prompt, message_history=history.messages)
        await history.save(result.new_messages())
        print(f"{prompt} -> {result.output} ({len(history.messages)} messages)")


async def race(url: str) -> None:
    """Two runs on the same history: one saves, the other is refused."""
    async with open_store(url) as store:
        first, second = HelixHistory(store, "chat-1"), HelixHistory(store, "chat-1")
        await first.load()
        await second.load()
        one = await agent.run("weather in Oslo", message_history=first.messages)
        two = await agent.run("weather in Rome", message_history=second.messages)
        await first.save(one.new_messages())
        try:
            await second.save(two.new_messages())
        except MessageCountConflictError as exc:
            print(f"second save refused: {exc.expected} rows expected, {exc.actual} found")


def main(db: Path, restarted: bool) -> None:
    url = f"sqlite:///{db}"
    if restarted:
        asyncio.run(turn(url, "what did I ask?"))
        asyncio.run(race(url))
        return
    asyncio.run(turn(url, "weather in Paris"))
    asyncio.run(turn(url, "weather in Lima"))
    print("restarting")
    sys.stdout.flush()
    subprocess.run([sys.executable, __file__, str(db), "--restarted"], check=True)


if __name__ == "__main__":
    path = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(tempfile.mkdtemp(prefix="helix-pai-")) / "chat.db"
    )
    main(path, "--restarted" in sys.argv[2:])
