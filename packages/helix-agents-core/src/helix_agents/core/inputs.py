"""What a store accepts: the one definition of storable input, applied by every backend."""

from __future__ import annotations

from .errors import ValidationError

__all__ = ["MAX_ID_BYTES", "check_id"]

MAX_ID_BYTES = 512
"""The longest id or key a store accepts, in bytes of UTF-8 (session, run, commit, key, …)."""


def check_id(value: object, field: str, *, session_id: str | None = None) -> str:
    """``value`` if it is a storable id: a string of valid Unicode, 1..MAX_ID_BYTES bytes.

    Anything else is a :class:`ValidationError` naming ``field`` and the session.
    """
    where = f"session {session_id!r}: " if session_id is not None else ""
    if not isinstance(value, str):
        raise ValidationError(
            f"{where}{field} must be a string, got {type(value).__name__}", session_id=session_id
        )
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValidationError(
            f"{where}{field} {value!r} is not valid Unicode (a lone surrogate)",
            session_id=session_id,
        ) from None
    if not 0 < size <= MAX_ID_BYTES:
        shown = value if size <= 64 else f"{value[:32]}…"
        raise ValidationError(
            f"{where}{field} {shown!r} is {size} bytes of UTF-8; ids are 1..{MAX_ID_BYTES}",
            session_id=session_id,
        )
    return value
