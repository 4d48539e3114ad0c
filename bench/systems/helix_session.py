"""``HelixSession``: the Agents SDK's ``Session`` on our stores, beside the SDK's own sessions.

Same Responses-API items and the same ``add_items`` / ``get_items`` calls as
the SDK subjects (``openai_sdk.py``), so the ratio is adapter plus store
against the SDK's session on the same server.
"""

from __future__ import annotations

from typing import Any

from helix_agents.openai_agents import HelixSession

from ..workload import Turn
from .openai_sdk import turn_items
from .ours import HelixSubject

__all__ = ["HelixSessionSubject"]


class HelixSessionSubject(HelixSubject):
    """One of our stores behind ``HelixSession``: each ``add_items`` is one counted commit."""

    family = "openai-agents"

    def __init__(self, subject: HelixSubject) -> None:
        super().__init__(
            f"HelixSession {subject.server}",
            subject.server,
            subject.url,
            subject.place,
            **subject.options,
        )
        self.sessions: dict[str, HelixSession] = {}

    def session(self, session_id: str) -> HelixSession:
        """A new session object for ``session_id`` on the open store."""
        return HelixSession(session_id, self.store, user_id="bench")

    async def start(self, session_id: str) -> None:
        # As the SDK subjects do: the session object only; the first add_items creates it.
        self.sessions[session_id] = self.session(session_id)

    async def append(self, session_id: str, turn: Turn, expected: int) -> None:
        items: list[Any] = turn_items(turn)
        await self.sessions[session_id].add_items(items)

    async def read(self, session_id: str, last: int) -> int:
        return len(await self.sessions[session_id].get_items(limit=last))

    async def close(self) -> None:
        self.sessions.clear()
        await super().close()
