"""The numeric limits every store enforces, and the page window, written once."""

from __future__ import annotations

from .checkpoint_pages import MAX_CHECKPOINT_PAGE
from .cursors import MAX_CURSOR_CHARS, decode_message_cursor, encode_message_cursor
from .edits import MAX_POP
from .errors import ValidationError
from .inputs import MAX_ID_BYTES, MAX_INT_DIGITS, MAX_JSON_DEPTH
from .models import PageOrder
from .rules import check_limit
from .scoped import MAX_SCOPED_KEYS

__all__ = [
    "MAX_CHECKPOINT_PAGE",
    "MAX_COUNT",
    "MAX_CURSOR_CHARS",
    "MAX_ID_BYTES",
    "MAX_INT_DIGITS",
    "MAX_JSON_DEPTH",
    "MAX_PAGE",
    "MAX_POP",
    "MAX_SCOPED_KEYS",
    "check_listing_first",
    "check_max_messages",
    "check_page_args",
    "check_tail_limit",
    "next_page_cursor",
    "page_window",
]

MAX_COUNT = 2**62
"""The largest row count, index or ``limit`` a store accepts (a signed 64-bit integer holds it)."""
MAX_PAGE = 500
"""The most rows one ``page_messages`` call returns, and the most sessions one listing page."""


def check_max_messages(max_messages: int | None) -> None:
    """A store's retention: ``None`` (keep every row) or between 1 and ``MAX_COUNT`` rows."""
    if max_messages is not None:
        check_limit(None, "max_messages", max_messages, 1, MAX_COUNT)


def check_tail_limit(session_id: str, limit: int) -> None:
    """``get_messages(limit=...)``: between 0 and ``MAX_COUNT`` rows."""
    check_limit(session_id, "limit", limit, 0, MAX_COUNT)


def check_listing_first(first: int) -> None:
    """``list_sessions(first=...)``: between 1 and ``MAX_PAGE`` sessions."""
    check_limit(None, "first", first, 1, MAX_PAGE)


def check_page_args(
    session_id: str, limit: int, cursor: str | None, order: PageOrder
) -> int | None:
    """Check a ``page_messages`` call's limit, order and cursor; the cursor's index or ``None``."""
    check_limit(session_id, "limit", limit, 1, MAX_PAGE)
    if order not in ("asc", "desc"):
        raise ValidationError(
            f"session {session_id!r}: order {order!r} is not 'asc' or 'desc'",
            session_id=session_id,
        )
    return None if cursor is None else decode_message_cursor(session_id, order, cursor)


def page_window(
    order: PageOrder, start: int | None, limit: int, first: int, count: int
) -> tuple[int, int]:
    """The indexes ``[lo, hi)`` of a page from ``start`` (a cursor's index, or ``None``).

    Rows below ``first`` were dropped by retention; ``count`` is the session's row count.
    """
    if order == "asc":
        lo = max(first, start if start is not None else first)
        return lo, min(count, lo + limit)
    hi = min(count, start if start is not None else count)
    return max(first, hi - limit), hi


def next_page_cursor(
    session_id: str, order: PageOrder, lo: int, hi: int, first: int, count: int
) -> str | None:
    """The cursor of the page after ``[lo, hi)``, or ``None`` when that page was the last."""
    if order == "asc":
        return encode_message_cursor(session_id, order, hi) if hi < count else None
    return encode_message_cursor(session_id, order, lo) if lo > first else None
