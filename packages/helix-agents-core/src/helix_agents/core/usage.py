"""Token and cost usage (docs/lifecycle.md, "Usage"): the checks of a commit's usage and
the session's stored totals, written once for every engine.

A session's totals live in core's record inside its stored metadata (``_helix``, key
``u``): one entry per model, ``{"requests", "input_tokens", "output_tokens",
"cached_tokens"}`` and, once a cost was given, ``"cost"`` as a decimal string. A commit
adds its usage to them in the same write as its rows (USG-1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from .errors import ValidationError
from .inputs import check_id
from .models import Usage, UsageTotals, add_usage

__all__ = [
    "COST_PLACES",
    "MAX_USAGE_COST",
    "MAX_USAGE_COUNT",
    "MAX_USAGE_MODELS",
    "check_usage",
    "record_usage",
    "usage_of",
]

MAX_USAGE_COUNT = 10**12
"""The largest count (requests, input, output or cached tokens) one usage entry may give."""
MAX_USAGE_COST = Decimal(10**9)
"""The largest cost one usage entry may give."""
COST_PLACES = 12
"""The most decimal places a cost may have."""
MAX_USAGE_MODELS = 64
"""The most usage entries in one commit, and the most models one session's totals hold."""

_COUNTS = ("requests", "input_tokens", "output_tokens", "cached_tokens")


def check_usage(session_id: str, usage: Sequence[Usage]) -> dict[str, Usage]:
    """A commit's usage, each entry checked (USG-4), summed per model."""
    if len(usage) > MAX_USAGE_MODELS:
        raise ValidationError(
            f"session {session_id!r}: a commit carries at most {MAX_USAGE_MODELS} usage "
            f"entries, got {len(usage)}",
            session_id=session_id,
        )
    by_model: dict[str, Usage] = {}
    for i, entry in enumerate(usage):
        _check_entry(session_id, i, entry)
        before = by_model.get(entry.model)
        by_model[entry.model] = entry if before is None else add_usage(before, entry)
    return by_model


def _check_entry(session_id: str, i: int, entry: Usage) -> None:
    where = f"session {session_id!r}: usage[{i}]"
    name = check_id(entry.model, f"usage[{i}].model", session_id=session_id)
    if not name.strip():
        raise ValidationError(f"{where}.model {name!r} is blank", session_id=session_id)
    for field in _COUNTS:
        value = getattr(entry, field)
        if type(value) is not int or not 0 <= value <= MAX_USAGE_COUNT:
            raise ValidationError(
                f"{where}.{field} must be an integer in 0..{MAX_USAGE_COUNT}, got {value!r}",
                session_id=session_id,
            )
    if entry.cached_tokens > entry.input_tokens:
        raise ValidationError(
            f"{where}.cached_tokens {entry.cached_tokens} exceeds its input_tokens "
            f"{entry.input_tokens} (cached tokens are input tokens read from a cache)",
            session_id=session_id,
        )
    cost = entry.cost
    if cost is not None and not (
        isinstance(cost, Decimal)
        and cost.is_finite()
        and 0 <= cost <= MAX_USAGE_COST
        and int(cost.as_tuple().exponent) >= -COST_PLACES
    ):
        raise ValidationError(
            f"{where}.cost must be a decimal in 0..{MAX_USAGE_COST} with at most "
            f"{COST_PLACES} decimal places, got {cost!r}",
            session_id=session_id,
        )


def record_usage(session_id: str, own: dict[str, Any], usage: Mapping[str, Usage]) -> None:
    """Add ``usage`` to the totals in core's record ``own`` (USG-1); more than
    :data:`MAX_USAGE_MODELS` models in a session is refused."""
    totals = {name: _load(name, stored) for name, stored in own.get("u", {}).items()}
    for name, entry in usage.items():
        before = totals.get(name)
        totals[name] = entry if before is None else add_usage(before, entry)
    if len(totals) > MAX_USAGE_MODELS:
        raise ValidationError(
            f"session {session_id!r}: its usage would name {len(totals)} models; "
            f"the most is {MAX_USAGE_MODELS}",
            session_id=session_id,
        )
    own["u"] = {name: _dump(entry) for name, entry in totals.items()}


def usage_of(own: Mapping[str, Any]) -> UsageTotals:
    """The session's totals, per model and overall, from core's record (USG-2)."""
    return UsageTotals.of(_load(name, stored) for name, stored in own.get("u", {}).items())


def _dump(entry: Usage) -> dict[str, Any]:
    out: dict[str, Any] = {field: getattr(entry, field) for field in _COUNTS}
    if entry.cost is not None:
        out["cost"] = format(entry.cost, "f")
    return out


def _load(name: str, stored: Mapping[str, Any]) -> Usage:
    cost = stored.get("cost")
    return Usage(
        model=name,
        cost=None if cost is None else Decimal(cost),
        **{field: stored[field] for field in _COUNTS},
    )
