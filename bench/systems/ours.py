"""Our stores, opened by URL through ``helix_agents.core.open_store``."""

from __future__ import annotations

from typing import Any

from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    SessionStateStore,
    StoreUnavailableError,
    open_store,
)

from ..storage import Place
from ..workload import Subject, Turn

__all__ = ["HelixSubject", "turn_rows"]


def turn_rows(turn: Turn) -> tuple[ChatMessage, ChatMessage, ChatMessage]:
    """The turn as three helix rows (chat-completions shape)."""
    call = {
        "id": turn.call_id,
        "type": "function",
        "function": {"name": turn.tool_name, "arguments": turn.arguments},
    }
    return (
        ChatMessage(role="user", content=turn.user_text),
        ChatMessage(role="assistant", content=None, tool_calls=[call]),
        ChatMessage(role="tool", content=turn.tool_output, tool_call_id=turn.call_id),
    )


class HelixSubject(Subject):
    """One of our stores: each turn is one commit with ``expect_message_count``."""

    family = "helix"

    def __init__(self, name: str, server: str, url: str, place: Place, **options: Any) -> None:
        self.name = name
        self.server = server
        self.url = url
        self.place = place
        self.options = options
        self._store: SessionStateStore | None = None

    @property
    def store(self) -> SessionStateStore:
        """The open store."""
        if self._store is None:
            raise StoreUnavailableError(f"{self.name} is not open")
        return self._store

    async def open(self) -> None:
        await self.place.remove()
        self._store = await open_store(self.url, **self.options).__aenter__()

    async def start(self, session_id: str) -> None:
        await self.store.create_session(session_id, user_id="bench")

    async def append(self, session_id: str, turn: Turn, expected: int) -> None:
        commit = MessageCommit(messages=turn_rows(turn), expect_message_count=expected)
        await self.store.append_messages(session_id, commit)

    async def read(self, session_id: str, last: int) -> int:
        return len(await self.store.get_messages(session_id, limit=last))

    async def storage_bytes(self) -> int | None:
        return await self.place.size()

    async def close(self) -> None:
        if self._store is not None:
            await self._store.close()
            self._store = None
        await self.place.remove()
