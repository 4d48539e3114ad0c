"""Scoped state: the rules every store applies to a commit's ``scoped_state`` (SCS-1..5).

docs/scoped-state.md has the design; stores check a commit's deltas with
:func:`check_scoped_deltas` and fold them with :func:`merge_deltas` before writing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .errors import ValidationError
from .inputs import check_id
from .models import ScopedStateDelta

__all__ = [
    "MAX_SCOPED_KEYS",
    "SCOPES",
    "check_scope",
    "check_scoped_deltas",
    "merge_deltas",
]

MAX_SCOPED_KEYS = 500
"""The most keys one commit may set across all its scoped-state deltas."""

SCOPES = ("app", "user", "session")


def check_scope(session_id: str | None, scope: object, owner: object) -> tuple[str, str]:
    """``(scope, owner)`` of a map read, if ``scope`` is a scope and ``owner`` an id."""
    if scope not in SCOPES:
        raise ValidationError(
            f"session {session_id!r}: scope {scope!r} is not one of {', '.join(SCOPES)}",
            session_id=session_id,
        )
    return str(scope), check_id(owner, "owner", session_id=session_id)


def check_scoped_deltas(session_id: str, deltas: Iterable[ScopedStateDelta]) -> None:
    """Refuse a commit whose deltas are malformed (SCS-3); the values were checked as JSON."""
    total = 0
    for i, delta in enumerate(deltas):
        where = f"scoped_state[{i}]"
        if delta.scope not in SCOPES:
            raise ValidationError(
                f"session {session_id!r}: {where} has scope {delta.scope!r}, "
                f"not one of {', '.join(SCOPES)}",
                session_id=session_id,
            )
        if delta.scope == "session":
            if delta.owner is not None:
                raise ValidationError(
                    f"session {session_id!r}: {where} is a session delta and names owner "
                    f"{delta.owner!r}; a session delta is the commit's own session",
                    session_id=session_id,
                )
        elif delta.owner is None:
            raise ValidationError(
                f"session {session_id!r}: {where} is a {delta.scope} delta without an owner",
                session_id=session_id,
            )
        for key in delta.changes:
            check_id(key, f"{where}.changes key", session_id=session_id)
        total += len(delta.changes)
    if total > MAX_SCOPED_KEYS:
        raise ValidationError(
            f"session {session_id!r}: the commit sets {total} scoped-state keys; "
            f"at most {MAX_SCOPED_KEYS}",
            session_id=session_id,
        )


def merge_deltas(
    session_id: str, deltas: Iterable[ScopedStateDelta]
) -> dict[tuple[str, str], dict[str, Any]]:
    """The deltas folded per map, later deltas winning key by key; ``session`` maps by id."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for delta in deltas:
        owner = session_id if delta.scope == "session" else delta.owner
        assert owner is not None  # check_scoped_deltas ran first
        merged.setdefault((delta.scope, owner), {}).update(delta.changes)
    return merged
