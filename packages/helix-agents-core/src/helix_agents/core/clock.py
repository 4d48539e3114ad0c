"""The default clock of every store, and the check of one a caller passes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import cast

from .errors import ValidationError

__all__ = ["check_clock", "utcnow"]


def utcnow() -> datetime:
    """The current time in UTC: the ``clock`` of a store that was given none."""
    return datetime.now(UTC)


def check_clock(clock: object) -> Callable[[], datetime]:
    """``clock`` if it can be called, else :class:`ValidationError` when the store is built."""
    if not callable(clock):
        raise ValidationError(f"clock must be a callable, not {type(clock).__name__}")
    return cast("Callable[[], datetime]", clock)
