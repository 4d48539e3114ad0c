"""What a store accepts: the one definition of storable input, applied by every backend.

* An **id** (session, user, run, commit, key, call, approval, checkpoint) is a
  string of valid Unicode without NUL, 1..``MAX_ID_BYTES`` bytes of UTF-8.
* A **JSON value** (metadata, content parts, provider fields, outputs, inputs,
  state) is built of dicts with string keys, lists, strings, ints, floats,
  bools and ``None``; floats are finite, ints have at most
  ``MAX_INT_DIGITS`` digits, strings are valid Unicode (NUL is fine), and
  containers nest at most ``MAX_JSON_DEPTH`` deep.
* Every other **text** field (content, tool names, …) is valid Unicode.

Stores check a value once, on its way in (:func:`check_record` through
``coerce``), before anything is written; reads never re-check. docs/limits.md
lists every limit and what its refusal looks like.
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal, TypeVar, overload

from pydantic import BaseModel

from .errors import ValidationError
from .messages import ChatMessage, chat_row_json
from .models import MessageCommit

__all__ = [
    "MAX_ID_BYTES",
    "MAX_INT_DIGITS",
    "MAX_JSON_DEPTH",
    "check_id",
    "check_input",
    "check_json",
    "check_record",
    "check_text",
]

MAX_ID_BYTES = 512
"""The longest id or key a store accepts, in bytes of UTF-8 (session, run, commit, key, …)."""

MAX_JSON_DEPTH = 100
"""How deep arrays and objects may nest inside one JSON value (``{"a": [1]}`` is 2 deep)."""

MAX_INT_DIGITS = 600
"""The most decimal digits of an integer in a JSON value (below Python's lowest int-text cap)."""

# Fields of the public models that stores index or key by: these take check_id.
_ID_FIELDS = frozenset(
    {
        "approval_id",
        "call_id",
        "checkpoint_id",
        "commit_id",
        "fence_run_id",
        "key",
        "owner",
        "run_id",
    }
)
_INT_BOUND = 10**MAX_INT_DIGITS
_SURROGATE = re.compile("[\ud800-\udfff]")
_M = TypeVar("_M", bound=BaseModel)
_T = TypeVar("_T")
_layouts: dict[type[BaseModel], tuple[tuple[str, ...], frozenset[str]]] = {}


def _where(session_id: str | None) -> str:
    return f"session {session_id!r}: " if session_id is not None else ""


def _shown(value: str) -> str:
    return repr(value) if len(value) <= 64 else f"{value[:32]!r}…"


@overload
def check_id(
    value: object, field: str, *, session_id: str | None = None, optional: Literal[False] = False
) -> str: ...


@overload
def check_id(
    value: object, field: str, *, session_id: str | None = None, optional: bool
) -> str | None: ...


def check_id(
    value: object, field: str, *, session_id: str | None = None, optional: bool = False
) -> str | None:
    """``value`` if it is a storable id: valid Unicode without NUL, 1..MAX_ID_BYTES bytes.

    ``None`` passes when ``optional``. Anything else is a :class:`ValidationError`
    naming ``field`` and the session.
    """
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ValidationError(
            f"{_where(session_id)}{field} must be a string, got {type(value).__name__}",
            session_id=session_id,
        )
    ascii_only = value.isascii()
    if not ascii_only and _SURROGATE.search(value):
        raise ValidationError(
            f"{_where(session_id)}{field} {_shown(value)} is not valid Unicode (a lone surrogate)",
            session_id=session_id,
        )
    if "\x00" in value:
        raise ValidationError(
            f"{_where(session_id)}{field} {_shown(value)} holds NUL (U+0000), which ids may not",
            session_id=session_id,
        )
    size = len(value) if ascii_only else len(value.encode("utf-8"))
    if not 0 < size <= MAX_ID_BYTES:
        raise ValidationError(
            f"{_where(session_id)}{field} {_shown(value)} is {size} bytes of UTF-8; "
            f"ids are 1..{MAX_ID_BYTES}",
            session_id=session_id,
        )
    return value


async def check_input(
    session_id: str, check: Callable[[], _T], require: Callable[[str], Awaitable[object]]
) -> _T:
    """``check()`` after the session id; if it refuses the input, a missing session first.

    A call on a missing session raises ``SessionNotFoundError`` whatever its other
    arguments (docs/commit.md orders a commit's checks so; CS-6): ``require(session_id)``
    raises it, else the refusal stands.
    """
    check_id(session_id, "session_id")
    try:
        return check()
    except ValidationError:
        await require(session_id)
        raise


def check_text(value: object, field: str, *, session_id: str | None = None) -> str:
    """``value`` if it is a string of valid Unicode (no lone surrogate)."""
    if not isinstance(value, str):
        raise ValidationError(
            f"{_where(session_id)}{field} must be a string, got {type(value).__name__}",
            session_id=session_id,
        )
    if not value.isascii() and _SURROGATE.search(value):
        raise ValidationError(
            f"{_where(session_id)}{field} is not valid Unicode (a lone surrogate)",
            session_id=session_id,
        )
    return value


class _RefusedError(Exception):
    """A value deep inside a JSON value was refused; ``path`` grows as the walk unwinds."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path: list[str] = []


def check_json(value: Any, field: str, *, session_id: str | None = None) -> Any:
    """``value`` if it is a storable JSON value (see the module docstring), in one pass.

    Anything else is a :class:`ValidationError` naming the field, the path
    inside it and the session.
    """
    try:
        _walk(value, 0)
    except _RefusedError as exc:
        path = "".join(reversed(exc.path))
        if len(path) > 80:
            path = f"{path[:40]}…{path[-30:]}"
        raise ValidationError(
            f"{_where(session_id)}{field}{path}: {exc.reason}", session_id=session_id
        ) from None
    return value


def _walk(value: Any, depth: int) -> None:
    if isinstance(value, str):
        if not value.isascii() and _SURROGATE.search(value):
            raise _RefusedError("text is not valid Unicode (a lone surrogate)")
    elif isinstance(value, dict):
        if depth >= MAX_JSON_DEPTH:
            raise _RefusedError(f"nests deeper than {MAX_JSON_DEPTH} levels")
        for key, item in value.items():
            if not isinstance(key, str):
                raise _RefusedError(f"object keys must be strings, got {type(key).__name__}")
            if not key.isascii() and _SURROGATE.search(key):
                raise _RefusedError("an object key is not valid Unicode (a lone surrogate)")
            try:
                _walk(item, depth + 1)
            except _RefusedError as exc:
                exc.path.append(f"[{_shown(key)}]")
                raise
    elif isinstance(value, (list, tuple)):
        if depth >= MAX_JSON_DEPTH:
            raise _RefusedError(f"nests deeper than {MAX_JSON_DEPTH} levels")
        for i, item in enumerate(value):
            try:
                _walk(item, depth + 1)
            except _RefusedError as exc:
                exc.path.append(f"[{i}]")
                raise
    elif isinstance(value, bool) or value is None:
        pass
    elif isinstance(value, int):
        if not -_INT_BOUND < value < _INT_BOUND:
            raise _RefusedError(f"an integer has more than {MAX_INT_DIGITS} digits")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise _RefusedError(f"{value!r} is not a JSON number (numbers must be finite)")
    else:
        raise _RefusedError(f"{type(value).__name__} is not a JSON value")


def check_record(record: _M, session_id: str | None = None, field: str | None = None) -> _M:
    """``record`` (a commit, row, item, answer, approval, checkpoint) if all of it is storable.

    Ids go through :func:`check_id`, datetimes pass, nested models are checked
    the same way, and every other field (provider fields included) through
    :func:`check_json`. The first refusal is a :class:`ValidationError` naming
    the field's path and the session.
    """
    if _storable(record):
        return record
    return _check_record(record, session_id, field)


def _check_record(record: _M, session_id: str | None, field: str | None) -> _M:
    prefix = f"{field}." if field else ""
    names, ids = _layout(type(record))
    for name in names:
        value = getattr(record, name)
        if value is None:
            continue
        if name in ids:
            check_id(value, prefix + name, session_id=session_id)
        else:
            _check_field(value, prefix + name, session_id)
    if record.__pydantic_extra__:
        for name, value in record.__pydantic_extra__.items():
            _check_field(value, prefix + name, session_id)
    return record


# The fast path: True only where _check_record would return, judged without building
# paths or messages; anything it is unsure of is False, and _check_record then decides
# (and names the first refusal). Most of an append's client CPU was this walk.
def _storable(record: BaseModel) -> bool:
    names, ids = _layout(type(record))
    for name in names:
        value = getattr(record, name)
        if not (value is None or (_plain_id(value) if name in ids else _plain(value))):
            return False
    extra = record.__pydantic_extra__
    if extra:
        for value in extra.values():
            if not _plain(value):
                return False
    return True


def storable_rows_json(commit: MessageCommit) -> list[str] | None:
    """Each row's JSON, as ``dump_message_json`` writes it, if :func:`check_record` would
    pass ``commit``: each row judged, then written by that function's own fast path, in
    one pass over the commit instead of a check and a dump.

    ``None`` when unsure (a row that is not a chat row of text fields, anything the
    fast path refuses); the caller then checks and dumps the usual way.
    """
    names, ids = _layout(MessageCommit)
    for name in names:
        value = getattr(commit, name)
        if name != "messages" and not (
            value is None or (_plain_id(value) if name in ids else _plain(value))
        ):
            return None
    rows = commit.messages
    if commit.__pydantic_extra__ or type(rows) is not tuple:
        return None
    fields, row_ids = _layout(ChatMessage)
    texts = []
    for row in rows:
        if type(row) is not ChatMessage:
            return None
        for name in fields:
            value = getattr(row, name)
            if value is not None and not (
                type(value) is str and (_plain_id(value) if name in row_ids else _plain(value))
            ):
                return None
        extra = row.__pydantic_extra__
        if extra and not all(_plain(value) for value in extra.values()):
            return None
        text = chat_row_json(row)
        if text is None:
            return None
        texts.append(text)
    return texts


def _plain_id(value: Any) -> bool:
    """Whether ``check_id`` would pass ``value``, judged for ASCII text only."""
    return (
        type(value) is str
        and value.isascii()
        and "\x00" not in value
        and 0 < len(value) <= MAX_ID_BYTES
    )


def _plain(value: Any) -> bool:
    """Whether ``_check_field`` would pass ``value``: its cases, for exact built-in types."""
    kind = type(value)
    if kind is str:
        return value.isascii() or _SURROGATE.search(value) is None
    if kind is tuple:
        return not value or all(isinstance(part, BaseModel) and _storable(part) for part in value)
    if kind is list or kind is dict:
        return _plain_json(value, 0)
    if value is None or kind is bool or kind is datetime or kind is Decimal:
        return True
    if kind is int:
        return bool(-_INT_BOUND < value < _INT_BOUND)
    if kind is float:
        return math.isfinite(value)
    if isinstance(value, BaseModel):
        return _storable(value)
    return False


def _layout(model: type[BaseModel]) -> tuple[tuple[str, ...], frozenset[str]]:
    """The declared fields of ``model`` and those of them that are ids, computed once."""
    found = _layouts.get(model)
    if found is None:
        names = tuple(model.model_fields)
        found = _layouts[model] = (names, _ID_FIELDS.intersection(names))
    return found


def _plain_json(value: list[Any] | dict[Any, Any], depth: int) -> bool:
    """Whether ``_walk(value, depth)`` would pass a list or dict: leaves judged inline."""
    if depth >= MAX_JSON_DEPTH:
        return False
    items: Any = value
    if type(value) is dict:
        for key in value:
            if type(key) is not str or (not key.isascii() and _SURROGATE.search(key)):
                return False
        items = value.values()
    for item in items:
        kind = type(item)
        if kind is str:
            if not item.isascii() and _SURROGATE.search(item):
                return False
        elif kind is dict or kind is list:
            if not _plain_json(item, depth + 1):
                return False
        elif item is None or kind is bool:
            continue
        elif kind is int:
            if not -_INT_BOUND < item < _INT_BOUND:
                return False
        elif kind is not float or not math.isfinite(item):
            return False
    return True


def _check_field(value: Any, path: str, session_id: str | None) -> None:
    if type(value) is str:
        if not value.isascii() and _SURROGATE.search(value):
            check_text(value, path, session_id=session_id)
    elif isinstance(value, BaseModel):
        _check_record(value, session_id, path)
    elif isinstance(value, tuple) and value and isinstance(value[0], BaseModel):
        for i, part in enumerate(value):
            _check_record(part, session_id, f"{path}[{i}]")
    elif not isinstance(value, (datetime, Decimal)):  # a usage cost: checked by core.usage
        check_json(value, path, session_id=session_id)
