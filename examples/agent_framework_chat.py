"""A Microsoft Agent Framework agent keeps its conversation in a helix-agents store; a restart.

Run it with ``uv run python examples/agent_framework_chat.py [DB_PATH]``; it is offline:
the chat client is a small ``BaseChatClient`` subclass that calls a ``weather`` tool and
remembers what it was asked. The first process runs two turns on an ``AgentSession``
whose history ``HelixHistoryProvider`` keeps in a SQLite file, and saves the session
itself (``AgentSession.to_dict()``) beside it; a second process (a restart) restores the
session from that JSON and continues the conversation. Two runs that load the same
history and both save: the second save is refused (``MessageCountConflictError``) and
the store keeps the first run's messages.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agent_framework import (
    Agent,
    AgentSession,
    BaseChatClient,
    ChatResponse,
    Content,
    FunctionInvocationLayer,
    Message,
)

from helix_agents.agent_framework import HelixHistoryProvider
from helix_agents.core import MessageCountConflictError, SessionStateStore, open_store


class ScriptedClient(FunctionInvocationLayer[Any], BaseChatClient[Any]):
    """Calls ``weather`` for "weather in X", reports its answer, and recalls past prompts."""

    def __init__(self, gate: asyncio.Barrier | None = None) -> None:
        super().__init__()
        self.gate = gate

    def _inner_get_response(
        self, *, messages: Sequence[Message], stream: bool, options: Mapping[str, Any], **_: Any
    ) -> Any:
        async def answer() -> ChatResponse:
            if self.gate is not None:
                await self.gate.wait()  # the racing runs have both loaded
            last = messages[-1]
            if last.role == "tool":
                return ChatResponse(
                    messages=[Message("assistant", [f"It is {last.contents[0].result}."])]
                )
            if last.text.startswith("weather in "):
                call = Content.from_function_call(
                    "c1", "weather", arguments={"city": last.text[11:]}
                )
                return ChatResponse(messages=[Message("assistant", [call])])
            asked = [m.text for m in messages if m.role == "user"][:-1]
            return ChatResponse(
                messages=[Message("assistant", [f"You asked: {'; '.join(asked)}."])]
            )

        return answer()


def weather(city: str) -> str:
    """The weather in ``city``."""
    return f"sunny in {city}"


def agent(store: SessionStateStore, gate: asyncio.Barrier | None = None) -> Agent[Any]:
    """An agent whose conversation history lives in ``store``."""
    provider = HelixHistoryProvider(store, user_id="ada")
    return Agent(ScriptedClient(gate), tools=[weather], context_providers=[provider])


async def turn(url: str, session: AgentSession, prompt: str) -> None:
    """One run: the provider loads the history before it and saves the run after it."""
    async with open_store(url) as store:
        result = await agent(store).run(prompt, session=session)
        count = len(await store.get_messages(session.session_id))
        print(f"{prompt} -> {result.text} ({count} messages)")


async def race(url: str, session_id: str) -> None:
    """Two runs on the same conversation: one saves, the other is refused."""
    async with open_store(url) as store:
        gate = asyncio.Barrier(2)
        runs = [
            agent(store, gate).run(prompt, session=AgentSession(session_id=session_id))
            for prompt in ("weather in Oslo", "weather in Rome")
        ]
        for outcome in await asyncio.gather(*runs, return_exceptions=True):
            if isinstance(outcome, MessageCountConflictError):
                print(
                    f"second run refused: {outcome.expected} rows expected, {outcome.actual} found"
                )


def main(db: Path, restarted: bool) -> None:
    url, saved = f"sqlite:///{db}", db.with_suffix(".session.json")
    if restarted:
        session = AgentSession.from_dict(json.loads(saved.read_text()))
        asyncio.run(turn(url, session, "what did I ask?"))
        asyncio.run(race(url, session.session_id))
        return
    session = AgentSession(session_id="chat-1")
    asyncio.run(turn(url, session, "weather in Paris"))
    asyncio.run(turn(url, session, "weather in Lima"))
    saved.write_text(json.dumps(session.to_dict()))
    print("restarting")
    sys.stdout.flush()
    subprocess.run([sys.executable, __file__, str(db), "--restarted"], check=True)


if __name__ == "__main__":
    path = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(tempfile.mkdtemp(prefix="helix-maf-")) / "chat.db"
    )
    main(path, "--restarted" in sys.argv[2:])
