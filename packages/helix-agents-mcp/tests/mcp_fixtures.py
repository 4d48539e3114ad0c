"""Fixtures of the adapter's tests: stores on the four backends, and helpers around them.

The stores are the OpenAI adapter's test stores (helix_fixtures.py): each test runs on
memory, SQLite, PostgreSQL and Redis; a missing server skips, or fails under
``HELIX_REQUIRE_BACKENDS=1``.
"""

from __future__ import annotations

from helix_fixtures import other_store, store, stores
from mcp.server.streamable_http import EventMessage
from mcp_types import JSONRPCMessage, JSONRPCNotification, JSONRPCResponse

__all__ = ["Sent", "notification", "other_store", "response", "store", "stores"]


def notification(text: str) -> JSONRPCNotification:
    """A log notification carrying ``text``."""
    return JSONRPCNotification(
        jsonrpc="2.0", method="notifications/message", params={"level": "info", "data": text}
    )


def response(request_id: int | str) -> JSONRPCResponse:
    """The result of request ``request_id``."""
    return JSONRPCResponse(jsonrpc="2.0", id=request_id, result={"content": []})


class Sent:
    """A replay's ``send_callback`` that keeps what it was sent."""

    def __init__(self) -> None:
        self.events: list[EventMessage] = []

    async def __call__(self, event: EventMessage) -> None:
        self.events.append(event)

    @property
    def ids(self) -> list[str | None]:
        """The event ids sent, in order."""
        return [event.event_id for event in self.events]

    @property
    def messages(self) -> list[JSONRPCMessage]:
        """The messages sent, in order."""
        return [event.message for event in self.events]
