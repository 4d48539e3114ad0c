"""Agent Framework messages as rows of a session's log, and back, exactly.

A row is a :class:`~helix_agents.core.ChatMessage` whose provider field
``agent_framework_message`` holds one ``Message`` as the JSON text of its
``to_dict()``, the form the framework's own file history provider writes. The row's
role (the message's, where core knows it) and text are derived, so that listings of the
session stay meaningful; see docs/integrations/agent-framework.md (MAF-2, MAF-9).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from agent_framework import Message

from helix_agents.core import ChatMessage, ValidationError
from helix_agents.core import Message as Row
from helix_agents.core.adapters import (
    corrupt_message,
    message_text,
    not_storable,
)
from helix_agents.core.inputs import check_record

__all__ = ["MESSAGE_FIELD", "decode_row", "encode_messages", "identity"]

MESSAGE_FIELD: Final = "agent_framework_message"
"""The provider field of a row that holds the message as JSON text."""

_ROLES: Final = frozenset({"system", "user", "assistant", "tool"})


def _dump(message: Message) -> dict[str, Any]:
    return message.to_dict()


def _dropped(message: Message, dumped: dict[str, Any]) -> str | None:
    """The first field the framework's ``to_dict`` would change or drop, if any.

    ``to_dict`` leaves out what it cannot serialize (bytes, a set, a tuple in
    ``additional_properties``) and turns tuples into lists; stored, such a value would
    come back changed, so the message is refused instead (MAF-9).
    """
    if dict(message.additional_properties or {}) != dumped.get("additional_properties", {}):
        return "additional_properties"
    for index, (content, data) in enumerate(zip(message.contents, dumped["contents"], strict=True)):
        if dict(content.additional_properties or {}) != data.get("additional_properties", {}):
            return f"contents[{index}].additional_properties"
        arguments = content.arguments
        if isinstance(arguments, Mapping) and dict(arguments) != data.get("arguments"):
            return f"contents[{index}].arguments"
    return None


def identity(message: Message) -> tuple[str, ...]:
    """What makes two messages the same one when a transcript is replayed: the message id,
    else its role and contents (the newest framework release's rule, MAF-6)."""
    if message.message_id is not None:
        return ("id", str(message.message_id))
    contents = [content.to_dict() for content in message.contents]
    return ("content", str(message.role), json.dumps(contents, sort_keys=True, default=repr))


def encode_messages(messages: Sequence[Message], session_id: str) -> list[ChatMessage]:
    """The rows for ``messages``; refuses, before any write, one that would not come back
    equal (MAF-2, MAF-9)."""
    rows = []
    for index, message in enumerate(messages):
        try:
            if not isinstance(message, Message):
                raise TypeError(f"{type(message).__name__} is not an agent_framework Message")
            dumped = _dump(message)
            if (field := _dropped(message, dumped)) is not None:
                raise TypeError(f"{field} holds a value JSON cannot hold exactly")
            text = json.dumps(dumped, ensure_ascii=False, allow_nan=False)
            same = _dump(Message.from_dict(json.loads(text))) == dumped
        except (TypeError, ValueError, RecursionError) as exc:
            raise not_storable(session_id, index, exc) from exc
        if not same:
            raise not_storable(
                session_id,
                index,
                "it would not come back equal (a value JSON cannot hold exactly): "
                f"{message.to_dict()!r:.200}",
            )
        role = message.role if message.role in _ROLES else "assistant"
        row = ChatMessage.model_validate(
            {"role": role, "content": message.text or None, MESSAGE_FIELD: text}
        )
        try:
            rows.append(check_record(row, session_id))
        except ValidationError as exc:  # a lone surrogate, or beyond the store's limits
            raise not_storable(session_id, index, exc) from exc
    return rows


def decode_row(row: Row, session_id: str) -> Message | None:
    """The message of ``row``; ``None`` for a row this adapter did not write (MAF-8).

    A row whose field is not a message raises
    :class:`~helix_agents.core.adapters.CorruptMessageError`.
    """
    try:
        text = message_text(row, MESSAGE_FIELD)
        if text is None:
            return None
        data = json.loads(text)
        if not isinstance(data, dict):
            raise TypeError(f"{MESSAGE_FIELD} holds {type(data).__name__}, not a message")
        message = Message.from_dict(data)
        if not isinstance(message, Message):
            raise TypeError(f"{MESSAGE_FIELD} holds {type(message).__name__}, not a message")
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise corrupt_message(row, session_id, "an Agent Framework", exc) from exc
    return message
