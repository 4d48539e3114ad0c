"""Agent Framework messages as rows of a session's log, and back, exactly.

A row is a :class:`~helix_agents.core.ChatMessage` whose provider field
``agent_framework_message`` holds one ``Message`` as the JSON text of its
``to_dict()``, the form the framework's own file history provider writes. The row's
role (the message's, where core knows it) and text are derived, so that listings of the
session stay meaningful; see docs/integrations/agent-framework.md (MAF-2, MAF-7).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from agent_framework import Message

from helix_agents.core import ChatMessage
from helix_agents.core import Message as Row
from helix_agents.core.inputs import check_record

from .errors import CorruptMessageError, MessageNotStorableError

__all__ = ["MESSAGE_FIELD", "decode_row", "encode_messages", "identity"]

MESSAGE_FIELD: Final = "agent_framework_message"
"""The provider field of a row that holds the message as JSON text."""

_ROLES: Final = frozenset({"system", "user", "assistant", "tool"})


def _dump(message: Message) -> dict[str, Any]:
    return message.to_dict()


def identity(message: Message) -> tuple[str, ...]:
    """What makes two messages the same one when a transcript is replayed: the message id,
    else its role and contents (the newest framework release's rule, MAF-6)."""
    if message.message_id is not None:
        return ("id", str(message.message_id))
    contents = [content.to_dict() for content in message.contents]
    return ("content", str(message.role), json.dumps(contents, sort_keys=True, default=repr))


def encode_messages(messages: Sequence[Message], session_id: str) -> list[ChatMessage]:
    """The rows for ``messages``; refuses, before any write, one that would not come back
    equal (MAF-2, MAF-7)."""
    rows = []
    for index, message in enumerate(messages):
        try:
            if not isinstance(message, Message):
                raise TypeError(f"{type(message).__name__} is not an agent_framework Message")
            dumped = _dump(message)
            text = json.dumps(dumped, ensure_ascii=False, allow_nan=False)
            same = _dump(Message.from_dict(json.loads(text))) == dumped
        except (TypeError, ValueError, RecursionError) as exc:
            raise MessageNotStorableError(
                f"session {session_id!r}: message {index} is not storable: {exc}"[:2000],
                session_id=session_id,
                index=index,
            ) from exc
        if not same:
            raise MessageNotStorableError(
                f"session {session_id!r}: message {index} would not come back equal "
                f"(a value JSON cannot hold exactly): {message.to_dict()!r:.200}",
                session_id=session_id,
                index=index,
            )
        role = message.role if message.role in _ROLES else "assistant"
        row = ChatMessage.model_validate(
            {"role": role, "content": message.text or None, MESSAGE_FIELD: text}
        )
        rows.append(check_record(row, session_id))
    return rows


def decode_row(row: Row, session_id: str) -> Message | None:
    """The message of ``row``; ``None`` for a row this adapter did not write (MAF-8).

    A row whose field is not a message raises :class:`CorruptMessageError`.
    """
    extra = (row.model_extra or {}) if isinstance(row, ChatMessage) else {}
    if MESSAGE_FIELD not in extra:
        return None
    text = extra[MESSAGE_FIELD]
    try:
        if not isinstance(text, str):
            raise TypeError(f"{MESSAGE_FIELD} is {type(text).__name__}, not JSON text")
        data = json.loads(text)
        if not isinstance(data, dict):
            raise TypeError(f"{MESSAGE_FIELD} holds {type(data).__name__}, not a message")
        message = Message.from_dict(data)
        if not isinstance(message, Message):
            raise TypeError(f"{MESSAGE_FIELD} holds {type(message).__name__}, not a message")
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        row_id = getattr(row, "id", None)
        raise CorruptMessageError(
            f"session {session_id!r}: row {row_id!r} is not an Agent Framework message: {exc}",
            session_id=session_id,
            row_id=row_id,
        ) from exc
    return message
