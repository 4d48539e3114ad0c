"""The default clock of every store."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["utcnow"]


def utcnow() -> datetime:
    """The current time in UTC: the ``clock`` of a store that was given none."""
    return datetime.now(UTC)
