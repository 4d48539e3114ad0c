"""SDK items as rows of a session's log, and back, exactly.

A row is a :class:`~helix_agents.core.ChatMessage` whose provider field
``openai_item`` holds the item as JSON text (ASCII, so any item a
``json.dumps`` accepts is stored whatever its strings hold, and comes back
equal, key order included). The row's role and text are derived from the item,
so that listings and UI counts of the session stay meaningful; see
docs/integrations/openai-agents.md.

An item is checked before anything is written (ADP-4, ADP-5 of
docs/integrations/sharing.md): core's limits on depth and integers, finite
floats, string keys, and only dicts, lists, strings, numbers, booleans and
``None`` — what JSON gives back equal. Lone surrogates are the one difference
from core's rules: the ASCII text keeps them exactly, so they are accepted.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NoReturn, TypeAlias

from helix_agents.core import ChatMessage, Message, ValidationError
from helix_agents.core.limits import MAX_INT_DIGITS, MAX_JSON_DEPTH

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

__all__ = [
    "ITEM_FIELD",
    "CorruptItemError",
    "ItemNotJsonError",
    "carry_ids",
    "check_item",
    "decode_item",
    "encode_item",
    "encode_items",
    "row_role",
]

ITEM_FIELD = "openai_item"
"""The provider field of a row that carries the SDK item, as JSON text."""

_INT_BOUND = 10**MAX_INT_DIGITS


class ItemNotJsonError(ValidationError, TypeError):
    """An item that would not come back equal from JSON (code ``validation_error``).

    Also a :class:`TypeError`, which is what the SDK's own sessions raise for it.
    ``path`` locates the refused value (``items[1]['content'][0]``).
    """

    def __init__(self, message: str, *, session_id: str | None = None, path: str = "") -> None:
        super().__init__(message, session_id=session_id)
        self.path = path


class CorruptItemError(ValidationError):
    """A stored row whose ``openai_item`` is not an item this adapter wrote (ADP-6).

    ``row_id`` names the row (``None`` for a row without an id).
    """

    def __init__(
        self, message: str, *, session_id: str | None = None, row_id: str | None = None
    ) -> None:
        super().__init__(message, session_id=session_id)
        self.row_id = row_id


ItemNotJsonError.__module__ = "helix_agents.openai_agents"
CorruptItemError.__module__ = "helix_agents.openai_agents"


class _RefusedError(Exception):
    """A value inside an item was refused; ``path`` grows as the walk unwinds."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path: list[str] = []


def _shown(key: str) -> str:
    return repr(key) if len(key) <= 40 else f"{key[:20]!r}…"


def _walk(value: Any, depth: int) -> None:
    # Bounded by MAX_JSON_DEPTH, so a self-containing value is refused, not a RecursionError.
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if not -_INT_BOUND < value < _INT_BOUND:
            raise _RefusedError(f"an integer has more than {MAX_INT_DIGITS} digits")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _RefusedError(f"{value!r} is not a JSON number (numbers must be finite)")
        return
    if not isinstance(value, (dict, list)):
        hint = " (a tuple would come back a list)" if isinstance(value, tuple) else ""
        raise _RefusedError(f"{type(value).__name__} is not a JSON value{hint}")
    if depth >= MAX_JSON_DEPTH:
        raise _RefusedError(f"nests deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise _RefusedError(
                    f"object keys must be strings, got {type(key).__name__} {key!r:.40}"
                )
            try:
                _walk(item, depth + 1)
            except _RefusedError as exc:
                exc.path.append(f"[{_shown(key)}]")
                raise
    else:
        for i, item in enumerate(value):
            try:
                _walk(item, depth + 1)
            except _RefusedError as exc:
                exc.path.append(f"[{i}]")
                raise


def _refuse(session_id: str, where: str, reason: str) -> NoReturn:
    raise ItemNotJsonError(
        f"session {session_id!r}: {where}: {reason}", session_id=session_id, path=where
    )


def check_item(item: Any, session_id: str, index: int = 0) -> TResponseInputItem:
    """``item`` if JSON gives it back equal, else :class:`ItemNotJsonError` naming the path."""
    where = f"items[{index}]"
    if not isinstance(item, dict):
        _refuse(
            session_id, where, f"an item must be a JSON object (a dict), got {type(item).__name__}"
        )
    try:
        _walk(item, 0)
    except _RefusedError as exc:
        path = "".join(reversed(exc.path))
        if len(path) > 80:
            path = f"{path[:40]}…{path[-30:]}"
        _refuse(session_id, where + path, exc.reason)
    checked: TResponseInputItem = item  # type: ignore[assignment]
    return checked


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
    role = item.get("role")
    if isinstance(role, str) and role in _ROLES:
        return _ROLES[role]
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


def encode_item(item: Any, session_id: str, index: int = 0) -> ChatMessage:
    """The row that stores ``item``, the ``index``-th of its batch, once :func:`check_item`
    passed it."""
    checked = check_item(item, session_id, index)
    try:
        text = json.dumps(checked, ensure_ascii=True)
    except (TypeError, ValueError, RecursionError) as exc:  # a checked item cannot fail
        _refuse(session_id, f"items[{index}]", f"not JSON: {exc}")
    fields: dict[str, Any] = {ITEM_FIELD: text}
    return ChatMessage(
        role=row_role(checked),
        content=_text(checked),
        # A fresh id per row: what tells a compaction's suffix from its replacement.
        id=uuid.uuid4().hex,
        **fields,
    )


def encode_items(items: Any, session_id: str) -> list[ChatMessage]:
    """The rows of a batch, every item checked before any row exists (ADP-4)."""
    if not isinstance(items, (list, tuple)):
        raise ItemNotJsonError(
            f"session {session_id!r}: items must be a list, got {type(items).__name__}",
            session_id=session_id,
            path="items",
        )
    return [encode_item(item, session_id, i) for i, item in enumerate(items)]


def carry_ids(rows: Sequence[ChatMessage], current: Sequence[Message]) -> list[ChatMessage]:
    """``rows`` where each that stores the very item of a ``current`` row (the same JSON
    text) takes that row's id, each current row's once and in order: what a whole-history
    replacement keeps is then carried again, not archived (CS-19)."""
    ids: dict[str, list[str]] = {}
    for row in current:
        if isinstance(row, ChatMessage) and row.id is not None:
            text = (row.model_extra or {}).get(ITEM_FIELD)
            if isinstance(text, str):
                ids.setdefault(text, []).append(row.id)
    carried = []
    for row in rows:
        same = ids.get((row.model_extra or {})[ITEM_FIELD])
        carried.append(row.model_copy(update={"id": same.pop(0)}) if same else row)
    return carried


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


def decode_item(row: Message, session_id: str) -> TResponseInputItem | None:
    """The item a row stores, ``None`` for a row another runtime wrote (no ``openai_item``),
    or :class:`CorruptItemError` for one this adapter cannot read back (ADP-6)."""
    extra = row.model_extra if isinstance(row, ChatMessage) else None
    if not extra or ITEM_FIELD not in extra:
        return None
    text = extra[ITEM_FIELD]
    reason = None
    if not isinstance(text, str):
        reason = f"is a {type(text).__name__}, not JSON text"
    else:
        try:
            item = json.loads(text, parse_constant=_no_constant)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, int digits, depth
            reason = f"is not valid JSON ({type(exc).__name__}: {str(exc)[:200]})"
        else:
            if isinstance(item, dict):
                decoded: TResponseInputItem = item  # type: ignore[assignment]
                return decoded
            reason = f"holds a {type(item).__name__}, not an item (a JSON object)"
    row_id = getattr(row, "id", None)
    raise CorruptItemError(
        f"session {session_id!r}: row {row_id!r}: its {ITEM_FIELD} {reason}",
        session_id=session_id,
        row_id=row_id,
    )
