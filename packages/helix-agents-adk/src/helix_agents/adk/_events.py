"""ADK events as rows: the whole event as JSON text in a provider field, read back exactly."""

from __future__ import annotations

from google.adk.events.event import Event

from helix_agents.core import ChatMessage, Message

from .errors import CorruptEventError

__all__ = ["EVENT_FIELD", "event_of", "row_of"]

EVENT_FIELD = "adk_event"
"""The provider field of a row that holds the event's JSON text."""


def row_of(event: Event, text: str) -> ChatMessage:
    """The row of ``event`` (``text``, its checked JSON): role from its author, content its text."""
    parts = event.content.parts if event.content is not None and event.content.parts else []
    texts = [part.text for part in parts if part.text]
    return ChatMessage(
        role="user" if event.author == "user" else "assistant",
        content="".join(texts) if texts else None,
        **{EVENT_FIELD: text},
    )


def event_of(row: Message, sid: str, index: int) -> Event | None:
    """The event row ``index`` of session ``sid`` holds; ``None`` for another runtime's row.

    A row whose ``adk_event`` is not an event's JSON is a :class:`CorruptEventError`.
    """
    extra = row.__pydantic_extra__ or {}
    if row.role == "context" or EVENT_FIELD not in extra:
        return None
    text = extra[EVENT_FIELD]
    try:
        if not isinstance(text, str):
            raise TypeError(f"{EVENT_FIELD} is a {type(text).__name__}, not JSON text")
        return Event.model_validate_json(text)
    except (ValueError, TypeError, RecursionError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CorruptEventError(
            f"session {sid!r}: row {index} holds no readable ADK event ({reason})",
            session_id=sid,
            row=index,
        ) from None
