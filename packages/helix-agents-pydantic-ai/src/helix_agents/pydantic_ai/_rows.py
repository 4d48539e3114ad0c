"""pydantic-ai messages as rows of a session's log, and back, exactly.

A row is a :class:`~helix_agents.core.ChatMessage` whose provider field
``pydantic_ai_message`` holds one ``ModelMessage`` as the JSON text
``ModelMessagesTypeAdapter`` dumps for it. The row's role (``user`` for a
request, ``assistant`` for a response) and text (the message's text parts) are
derived, so that listings of the session stay meaningful; see
docs/integrations/pydantic-ai.md (PAI-2, PAI-3).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import pydantic
import pydantic_core
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    TextPart,
    UserPromptPart,
)

from helix_agents.core import ChatMessage, Message
from helix_agents.core.adapters import (
    corrupt_message,
    message_text,
    not_storable,
)
from helix_agents.core.inputs import check_record

__all__ = ["MESSAGE_FIELD", "decode_row", "encode_messages"]

MESSAGE_FIELD: Final = "pydantic_ai_message"
"""The provider field of a row that holds the message as JSON text."""


def _text(message: ModelMessage) -> str | None:
    parts = [
        part.content
        for part in message.parts
        if isinstance(part, UserPromptPart | TextPart) and isinstance(part.content, str)
    ]
    return "\n".join(parts) if parts else None


def encode_messages(messages: Sequence[ModelMessage], session_id: str) -> list[ChatMessage]:
    """The rows for ``messages``; refuses, before any write, one that would not come back
    equal (PAI-3, PAI-6)."""
    rows = []
    for index, message in enumerate(messages):
        try:
            # A value the serializer would only warn about (an int key where a str is
            # expected) is an error here: refused, not stored changed.
            text = ModelMessagesTypeAdapter.dump_json([message], warnings="error").decode()
            # Equal as Python values, not as objects: a URL part reads back with its media
            # type worked out, which is what it would have said anyway (PAI-3).
            same = ModelMessagesTypeAdapter.dump_python(
                ModelMessagesTypeAdapter.validate_json(text)
            ) == ModelMessagesTypeAdapter.dump_python([message], warnings="error")
        except (
            pydantic.ValidationError,
            pydantic_core.PydanticSerializationError,
            ValueError,
            RecursionError,
        ) as exc:
            raise not_storable(session_id, index, exc) from exc
        if not same:
            raise not_storable(
                session_id,
                index,
                "it would not come back equal (a value JSON cannot hold exactly): "
                f"{message!r:.200}",
            )
        role = "user" if isinstance(message, ModelRequest) else "assistant"
        row = ChatMessage.model_validate(
            {"role": role, "content": _text(message), MESSAGE_FIELD: text}
        )
        rows.append(check_record(row, session_id))
    return rows


def decode_row(row: Message, session_id: str) -> ModelMessage | None:
    """The message of ``row``; ``None`` for a row this adapter did not write (PAI-4).

    A row whose field is not a message raises
    :class:`~helix_agents.core.adapters.CorruptMessageError` (PAI-5).
    """
    try:
        text = message_text(row, MESSAGE_FIELD)
        if text is None:
            return None
        (message,) = ModelMessagesTypeAdapter.validate_json(text)
    except (pydantic.ValidationError, TypeError, ValueError) as exc:
        raise corrupt_message(row, session_id, "a pydantic-ai", exc) from exc
    return message
