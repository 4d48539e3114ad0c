"""Opaque page cursors, bound to the session (or user) and order they came from."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import UTC, datetime
from typing import Any

import pydantic_core

from .errors import ValidationError
from .inputs import check_id
from .models import PageOrder

__all__ = [
    "MAX_CURSOR_CHARS",
    "decode_all_cursor",
    "decode_message_cursor",
    "decode_sessions_cursor",
    "encode_all_cursor",
    "encode_message_cursor",
    "encode_sessions_cursor",
]

MAX_CURSOR_CHARS = 16_384
"""The longest cursor a store reads: twice what the longest ids can make."""
_MAX_INDEX = 2**62


def _encode(payload: dict[str, Any]) -> str:
    raw = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _shown(cursor: object) -> str:
    text = repr(cursor)
    return text if len(text) <= 80 else f"{text[:60]}… ({len(text)} characters)"


def _decode(cursor: object, what: str, session_id: str | None) -> dict[str, Any]:
    try:
        if not isinstance(cursor, str) or len(cursor) > MAX_CURSOR_CHARS:
            raise TypeError
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        # pydantic's parser, not json.loads: deep nesting is a ValueError, not a RecursionError.
        payload = pydantic_core.from_json(raw)
        if not isinstance(payload, dict) or type(payload.get("v")) is not int or payload["v"] != 1:
            raise TypeError
        return payload
    except (TypeError, ValueError, binascii.Error):
        where = "" if session_id is None else f"session {session_id!r}: "
        raise ValidationError(
            f"{where}malformed {what} cursor {_shown(cursor)}", session_id=session_id
        ) from None


def encode_message_cursor(session_id: str, order: PageOrder, index: int) -> str:
    """A cursor for the page of ``session_id`` in ``order`` that starts at row ``index``."""
    return _encode({"v": 1, "s": session_id, "o": order, "i": index})


def decode_message_cursor(session_id: str, order: PageOrder, cursor: str) -> int:
    """The row index a cursor points at; :class:`ValidationError` if it belongs elsewhere."""
    payload = _decode(cursor, "message page", session_id)
    index = payload.get("i")
    if payload.get("s") != session_id or payload.get("o") != order:
        raise ValidationError(
            f"session {session_id!r}: cursor {_shown(cursor)} belongs to another session or order",
            session_id=session_id,
        )
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= _MAX_INDEX:
        raise ValidationError(
            f"session {session_id!r}: malformed message page cursor {_shown(cursor)}",
            session_id=session_id,
        )
    return index


def encode_sessions_cursor(user_id: str, last_activity_at: datetime, session_id: str) -> str:
    """A cursor for the listing of ``user_id`` after the given session."""
    return _encode({"v": 1, "u": user_id, "t": last_activity_at.isoformat(), "id": session_id})


def decode_sessions_cursor(user_id: str, cursor: str) -> tuple[datetime, str]:
    """The ``(last_activity_at, id)`` of the last session of the previous page."""
    payload = _decode(cursor, "session listing", None)
    try:
        if payload.get("u") != user_id:
            raise ValueError
        at = datetime.fromisoformat(payload["t"])
        if at.tzinfo is None:
            raise ValueError
        at = at.astimezone(UTC)
        sid = check_id(payload["id"], "cursor session id")
    except (KeyError, TypeError, ValueError, OverflowError):
        raise ValidationError(
            f"listing cursor {_shown(cursor)} is malformed or belongs to another user "
            f"than {user_id!r}"
        ) from None
    return at, sid


def encode_all_cursor(filters: str, session_id: str) -> str:
    """A cursor for the store-wide listing under ``filters`` (their fingerprint), after
    ``session_id``."""
    return _encode({"v": 1, "k": "all", "f": filters, "id": session_id})


def decode_all_cursor(filters: str, cursor: str) -> str:
    """The id of the last session the previous page covered; :class:`ValidationError` if the
    cursor is malformed or came from a listing with other filters (or a user's listing)."""
    payload = _decode(cursor, "session listing", None)
    try:
        if payload.get("k") != "all" or payload.get("f") != filters:
            raise ValueError
        return check_id(payload["id"], "cursor session id")
    except (KeyError, TypeError, ValueError):
        raise ValidationError(
            f"listing cursor {_shown(cursor)} is malformed or belongs to a listing with "
            f"other filters"
        ) from None
