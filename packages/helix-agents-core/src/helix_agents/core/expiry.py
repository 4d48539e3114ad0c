"""Session expiry and checkpoint retention (docs/lifecycle.md, "Expiry"), decided once
in core for every engine (TTL-1..TTL-9).

A session expires when no write landed for its idle TTL (the session's own, else the
store's ``idle_ttl``), or at its absolute ``expires_at``; whichever comes first. Core
decides it from the session's head (``last_activity_at``, its record under the
reserved metadata key ``_helix``, sub-key ``x``) and the store's clock, so an expired
session is gone for every call at once; :meth:`sweep` and the store's background
sweeper remove its storage.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypedDict

from pydantic import AwareDatetime, ConfigDict, Field

from .errors import ValidationError
from .messages import Value
from .models import Checkpoint

__all__ = [
    "DEFAULT_SWEEP_INTERVAL",
    "DEFAULT_SWEEP_LIMIT",
    "OPTION_NAMES",
    "MAX_KEEP_CHECKPOINTS",
    "MAX_SWEEP_LIMIT",
    "MAX_TTL",
    "MIN_TTL",
    "ExpiryOptions",
    "ExpiryPolicy",
    "SessionExpiry",
    "SweepResult",
    "check_expires_at",
    "check_keep_checkpoints",
    "check_ttl",
    "expiry_options",
    "expiry_record",
]

MIN_TTL = timedelta(milliseconds=1)
"""The shortest TTL (idle or checkpoint) and sweep interval."""
MAX_TTL = timedelta(days=36_500)
"""The longest TTL and sweep interval: about a hundred years."""
DEFAULT_SWEEP_INTERVAL = timedelta(seconds=60)
"""How long the background sweeper waits between two sweeps."""
DEFAULT_SWEEP_LIMIT = 1_000
"""How many sessions one :meth:`sweep` call reads at most, by default."""
MAX_SWEEP_LIMIT = 100_000
"""The largest ``limit`` of one :meth:`sweep` call."""
MAX_KEEP_CHECKPOINTS = 1_000_000
"""The largest ``keep_checkpoints``."""

_TOO_LONG = 2**53

OPTION_NAMES = ("idle_ttl", "sweep_interval", "keep_checkpoints", "checkpoint_ttl")
"""The store options of this module, as keywords and URL query parameters."""


class ExpiryOptions(TypedDict, total=False):
    """The expiry and retention options every store takes as keywords (and, for a URL,
    as query parameters): see docs/lifecycle.md, "Expiry"."""

    idle_ttl: float | timedelta | None
    sweep_interval: float | timedelta | None
    keep_checkpoints: int | None
    checkpoint_ttl: float | timedelta | None


class SessionExpiry(Value):
    """A session's own expiry settings and when it expires under them and the store's
    ``idle_ttl`` (``deadline``: ``None``, never)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    idle_ttl: timedelta | None = None
    expires_at: AwareDatetime | None = None
    deadline: AwareDatetime | None = None


class SweepResult(Value):
    """What one sweep did: the expired sessions it deleted, how many sessions it read,
    and whether it reached the store's last session (the next sweep starts over)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    deleted: tuple[str, ...] = Field(default_factory=tuple)
    scanned: int = 0
    wrapped: bool = False


def _where(session_id: str | None) -> str:
    return "" if session_id is None else f"session {session_id!r}: "


def check_ttl(name: str, value: object, *, session_id: str | None = None) -> timedelta | None:
    """``None``, or a duration (seconds as an int or float, or a timedelta) of
    :data:`MIN_TTL`..:data:`MAX_TTL`; else :class:`ValidationError` naming it."""
    if value is None:
        return None
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool)):
        seconds = float(min(value, _TOO_LONG))  # an int beyond a float's range: too long
    else:
        raise ValidationError(
            f"{_where(session_id)}{name} must be seconds (int or float) or a timedelta, "
            f"got {value!r}",
            session_id=session_id,
        )
    if not MIN_TTL.total_seconds() <= seconds <= MAX_TTL.total_seconds():  # NaN fails too
        raise ValidationError(
            f"{_where(session_id)}{name} {value!r} is outside 1 ms..{MAX_TTL.days} days",
            session_id=session_id,
        )
    return timedelta(seconds=seconds)


def check_expires_at(session_id: str, value: object) -> datetime | None:
    """``None`` or a timezone-aware datetime."""
    if value is None:
        return None
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise ValidationError(
            f"session {session_id!r}: expires_at must be a timezone-aware datetime, got {value!r}",
            session_id=session_id,
        )
    return value


def check_keep_checkpoints(value: object) -> int | None:
    """``None`` or an int of 1..:data:`MAX_KEEP_CHECKPOINTS`."""
    if value is None:
        return None
    if type(value) is not int or not 1 <= value <= MAX_KEEP_CHECKPOINTS:
        raise ValidationError(
            f"keep_checkpoints {value!r} is not an int of 1..{MAX_KEEP_CHECKPOINTS}"
        )
    return value


def expiry_options(query: Mapping[str, str]) -> dict[str, Any]:
    """The expiry options among a URL's query parameters, as numbers (seconds; an int for
    ``keep_checkpoints``; ``sweep_interval=off``: ``None``); a value that is not a number
    is a :class:`ValidationError`."""
    found: dict[str, Any] = {}
    for name in OPTION_NAMES:
        raw = query.get(name)
        if raw is None:
            continue
        if name == "sweep_interval" and raw == "off":
            found[name] = None
            continue
        try:
            found[name] = int(raw) if name == "keep_checkpoints" else float(raw)
        except ValueError:
            raise ValidationError(f"URL option {name}={raw!r} is not a number") from None
    return found


def expiry_record(idle_ttl: timedelta | None, expires_at: datetime | None) -> dict[str, Any]:
    """A session's stored expiry (``_helix.x``): ``i`` the idle TTL in milliseconds,
    ``a`` the absolute expiry as ISO 8601; empty when neither is set."""
    record: dict[str, Any] = {}
    if idle_ttl is not None:
        record["i"] = max(1, round(idle_ttl / MIN_TTL))
    if expires_at is not None:
        record["a"] = expires_at.isoformat()
    return record


def _own_expiry(metadata: Mapping[str, Any]) -> tuple[timedelta | None, datetime | None]:
    own = metadata.get("_helix")
    record = own.get("x") if isinstance(own, dict) else None
    if not isinstance(record, dict):
        return None, None
    idle = record.get("i")
    at = record.get("a")
    return (
        None if idle is None else timedelta(milliseconds=idle),
        None if at is None else datetime.fromisoformat(at),
    )


@dataclass(frozen=True, slots=True)
class ExpiryPolicy:
    """A store's expiry and retention options, and the rules that apply them."""

    idle_ttl: timedelta | None = None
    keep_checkpoints: int | None = None
    checkpoint_ttl: timedelta | None = None

    def expiry(self, last_activity_at: datetime, metadata: Mapping[str, Any]) -> SessionExpiry:
        """The session's own settings and its deadline (TTL-1, TTL-2)."""
        idle, at = _own_expiry(metadata)
        effective = self.idle_ttl if idle is None else idle
        ends = [] if effective is None else [last_activity_at + effective]
        if at is not None:
            ends.append(at)
        return SessionExpiry(idle_ttl=idle, expires_at=at, deadline=min(ends, default=None))

    def may_expire(self, metadata: Mapping[str, Any]) -> bool:
        """Whether a session with this stored metadata can expire at all."""
        if self.idle_ttl is not None:
            return True
        own = metadata.get("_helix")
        return isinstance(own, dict) and "x" in own

    def expired(
        self, last_activity_at: datetime, metadata: Mapping[str, Any], now: datetime
    ) -> bool:
        """Whether the session is expired at ``now``: its deadline is at or before it."""
        if not self.may_expire(metadata):
            return False
        deadline = self.expiry(last_activity_at, metadata).deadline
        return deadline is not None and deadline <= now

    @property
    def retains_checkpoints(self) -> bool:
        """Whether saving a checkpoint drops others (TTL-7)."""
        return self.keep_checkpoints is not None or self.checkpoint_ttl is not None

    def dropped(self, kept: Iterable[Checkpoint], saved: Checkpoint, now: datetime) -> list[str]:
        """The ids of the checkpoints ``kept`` (without ``saved``) that retention drops when
        ``saved`` lands: older than ``checkpoint_ttl`` by ``created_at``, and all but the
        newest ``keep_checkpoints - 1`` by ``created_at`` then id (TTL-7)."""
        others = sorted(
            (c for c in kept if c.checkpoint_id != saved.checkpoint_id),
            key=lambda c: (c.created_at, c.checkpoint_id),
        )
        drop: list[Checkpoint] = []
        if self.checkpoint_ttl is not None:
            cutoff = now - self.checkpoint_ttl
            drop = [c for c in others if c.created_at <= cutoff]
            others = [c for c in others if c.created_at > cutoff]
        if self.keep_checkpoints is not None:
            extra = len(others) - (self.keep_checkpoints - 1)
            if extra > 0:
                drop += others[:extra]
        return [c.checkpoint_id for c in drop]
