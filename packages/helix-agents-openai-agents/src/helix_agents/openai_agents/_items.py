"""SDK items as rows of a session's log, and back, exactly.

A row is a :class:`~helix_agents.core.ChatMessage` whose provider field
``openai_item`` holds the item as JSON text (ASCII, so any item a
``json.dumps`` accepts is stored whatever its strings hold, and comes back
equal, key order included). The row's role and text are derived from the item,
so that listings and UI counts of the session stay meaningful; see
docs/integrations/openai-agents.md.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from helix_agents.core import ChatMessage, Message, ValidationError

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

__all__ = ["ITEM_FIELD", "ItemNotJsonError", "decode_item", "encode_item", "row_role"]

ITEM_FIELD = "openai_item"
"""The provider field of a row that carries the SDK item, as JSON text."""


class ItemNotJsonError(ValidationError, TypeError):
    """An item that JSON cannot hold (code ``validation_error``).

    Also a :class:`TypeError`, which is what the SDK's own sessions raise for it.
    """


ItemNotJsonError.__module__ = "helix_agents.openai_agents"

RowRole: TypeAlias = Literal["system", "user", "assistant", "tool"]

_ROLES: dict[str, RowRole] = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    "developer": "system",
}


def row_role(item: Mapping[str, Any]) -> RowRole:
    """The row role of an item: its own role, else ``tool`` for what answers a call.

    Messages keep their role (``developer`` is a ``system`` row). Items with no
    role are ``tool`` rows when they carry a call's result (``*_output``, an
    MCP approval response) and ``assistant`` rows otherwise: function and tool
    calls, reasoning, compaction summaries and every other model-made item.
    """
    role = _ROLES.get(item.get("role"))  # type: ignore[arg-type]
    if role is not None:
        return role
    kind = item.get("type")
    if isinstance(kind, str) and (kind.endswith("_output") or kind == "mcp_approval_response"):
        return "tool"
    return "assistant"


def _text(item: Mapping[str, Any]) -> str | None:
    """The text a person reads in a message item, or ``None`` for other items."""
    if "role" not in item:
        return None
    content = item.get("content")
    text: str | None = None
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = [
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        ]
        text = "".join(parts) if parts else None
    if text is not None and not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return None  # a lone surrogate: the item keeps it, the row's text cannot
    return text


def encode_item(item: TResponseInputItem, session_id: str) -> ChatMessage:
    """The row that stores ``item``; a :class:`ValidationError` if it is not JSON."""
    if not isinstance(item, Mapping):
        raise ItemNotJsonError(
            f"session {session_id!r}: an item must be a JSON object (a dict), "
            f"got {type(item).__name__}",
            session_id=session_id,
        )
    try:
        text = json.dumps(item, ensure_ascii=True)
    except (TypeError, ValueError) as exc:
        raise ItemNotJsonError(
            f"session {session_id!r}: item of type {item.get('type', 'message')!r} "
            f"is not JSON: {exc}",
            session_id=session_id,
        ) from None
    fields: dict[str, Any] = {ITEM_FIELD: text}
    return ChatMessage(
        role=row_role(item),
        content=_text(item),
        # A fresh id per row: what tells a compaction's suffix from its replacement.
        id=uuid.uuid4().hex,
        **fields,
    )


def decode_item(row: Message) -> TResponseInputItem | None:
    """The item a row stores, or ``None`` for a row another runtime wrote."""
    extra = row.model_extra if isinstance(row, ChatMessage) else None
    text = extra.get(ITEM_FIELD) if extra else None
    if not isinstance(text, str):
        return None
    item: TResponseInputItem = json.loads(text)
    return item
