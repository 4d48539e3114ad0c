"""ADK events as rows: the whole event as JSON text in a provider field, read back exactly."""

from __future__ import annotations

from typing import Any

from google.adk.events.event import Event
from pydantic_core import to_jsonable_python

from helix_agents.core import ChatMessage, Message

__all__ = ["EVENT_FIELD", "event_of", "json_safe", "row_of"]

EVENT_FIELD = "adk_event"
"""The provider field of a row that holds the event's JSON text."""


def row_of(event: Event) -> ChatMessage:
    """The row of ``event``: role from its author, content its text, the event itself kept whole."""
    parts = event.content.parts if event.content is not None and event.content.parts else []
    texts = [part.text for part in parts if part.text]
    return ChatMessage(
        role="user" if event.author == "user" else "assistant",
        content="".join(texts) if texts else None,
        **{EVENT_FIELD: event.model_dump_json()},
    )


def event_of(row: Message) -> Event | None:
    """The event a row holds, or ``None`` for a row another runtime wrote."""
    extra = row.__pydantic_extra__ or {}
    text = extra.get(EVENT_FIELD)
    if row.role == "context" or not isinstance(text, str):
        return None
    return Event.model_validate_json(text)


def json_safe(state: dict[str, Any]) -> dict[str, Any]:
    """State values as JSON data, as ADK's database service stores them (datetimes, models)."""
    safe: dict[str, Any] = to_jsonable_python(state)
    return safe
