"""The refusal codes the server-side copies of the rules send, and the error each stands for.

The PostgreSQL functions and the Redis scripts check a write in the server, so
that it is one round trip, and refuse it with one of these codes and the state
they saw. The client then replays core's own checks on that state
(:func:`raise_refusal`), so the class, code and message are core's; a replay
that accepts, or raises another class than the code's, is a drift between the
server's copy of the rules and core, reported as a :class:`StateStoreError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import NoReturn

from .errors import (
    ApprovalNotFoundError,
    ConcurrencyConflictError,
    ContextItemDeliveryConflictError,
    LateAnswerDeliveryConflictError,
    MessageCountConflictError,
    RunSupersededError,
    SessionExistsError,
    SessionNotFoundError,
    StateStoreError,
    ValidationError,
    session_not_found,
)

__all__ = ["REFUSALS", "raise_refusal"]

REFUSALS: Mapping[str, tuple[type[StateStoreError], ...]] = MappingProxyType(
    {
        "session_not_found": (SessionNotFoundError,),
        "exists": (SessionExistsError,),
        # Input that only the session's state shows to be bad: a row offset, a
        # rewind or truncate beyond the rows, a reused run id, a checkpoint count.
        "invalid": (ValidationError,),
        # A rewind, truncate or replace below the rows retention kept.
        "retention": (ValidationError,),
        "superseded": (RunSupersededError,),
        "count_conflict": (MessageCountConflictError,),
        "context_conflict": (ContextItemDeliveryConflictError,),
        "late_conflict": (LateAnswerDeliveryConflictError,),
        "approval_not_found": (ApprovalNotFoundError,),
        # A compaction's expected window start (a conflict) or its boundary (bad input).
        "compaction": (ConcurrencyConflictError, ValidationError),
    }
)
"""Each refusal code a server copy of the rules may send → the error classes it may raise."""


def raise_refusal(
    session_id: str, code: str, checks: Iterable[Callable[[], object]], *, server: str
) -> NoReturn:
    """Raise core's error for the refusal ``code`` by running ``checks`` (core's, in order).

    ``server`` names the refusing copy of the rules in the drift error.
    """
    if code == "session_not_found":
        raise session_not_found(session_id)
    expected = REFUSALS.get(code, ())
    try:
        for check in checks:
            check()
    except StateStoreError as err:
        if type(err) in expected:
            raise
        found = f"raise {type(err).__name__} ({err})"
    else:
        found = "accept it"
    raise StateStoreError(
        f"session {session_id!r}: {server} refused the write as {code!r} but core's rules "
        f"{found}: the server's copy of the rules has drifted from core; please report",
        session_id=session_id,
    )
