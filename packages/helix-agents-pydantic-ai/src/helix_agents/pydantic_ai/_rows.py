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
from helix_agents.core.inputs import check_record

from .errors import CorruptMessageError, MessageNotStorableError

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
            raise MessageNotStorableError(
                f"session {session_id!r}: message {index} is not storable: {exc}",
                session_id=session_id,
                index=index,
            ) from exc
        if not same:
            raise MessageNotStorableError(
                f"session {session_id!r}: message {index} would not come back equal "
                f"(a value JSON cannot hold exactly): {message!r:.200}",
                session_id=session_id,
                index=index,
            )
        role = "user" if isinstance(message, ModelRequest) else "assistant"
        row = ChatMessage.model_validate(
            {"role": role, "content": _text(message), MESSAGE_FIELD: text}
        )
        rows.append(check_record(row, session_id))
    return rows


def decode_row(row: Message, session_id: str) -> ModelMessage | None:
    """The message of ``row``; ``None`` for a row this adapter did not write (PAI-4).

    A row whose field is not a message raises :class:`CorruptMessageError` (PAI-5).
    """
    extra = (row.model_extra or {}) if isinstance(row, ChatMessage) else {}
    if MESSAGE_FIELD not in extra:
        return None
    text = extra[MESSAGE_FIELD]
    try:
        if not isinstance(text, str):
            raise TypeError(f"{MESSAGE_FIELD} is {type(text).__name__}, not JSON text")
        (message,) = ModelMessagesTypeAdapter.validate_json(text)
    except (pydantic.ValidationError, TypeError, ValueError) as exc:
        row_id = getattr(row, "id", None)
        raise CorruptMessageError(
            f"session {session_id!r}: row {row_id!r} is not a pydantic-ai message: {exc}",
            session_id=session_id,
            row_id=row_id,
        ) from exc
    return message
