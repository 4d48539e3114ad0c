"""Turn a refusal returned by a server-side function into core's error.

The server-side functions (``functions/*.sql``) decide *whether* a write is
refused, by mirroring core's rules; the error itself is raised here by replaying core's
own checks on the state the function saw. So every class, code and message
is core's, and a refusal that core's rules do not reproduce (a drift between
the SQL mirror and core) surfaces as a loud error instead of a wrong answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from helix_agents.core import (
    ApprovalNotFoundError,
    ContextItemDeliveryConflictError,
    LateAnswerDeliveryConflictError,
    MessageCountConflictError,
    RunInfo,
    RunSupersededError,
    SessionExistsError,
    SessionNotFoundError,
    StateStoreError,
    ValidationError,
)
from helix_agents.core import (
    assert_retained as core_assert_retained,
)

__all__ = ["Snapshot", "assert_retained", "refuse"]

_EXPECTED: dict[str, type[StateStoreError]] = {
    "session_not_found": SessionNotFoundError,
    "invalid": ValidationError,
    "retention": ValidationError,
    "superseded": RunSupersededError,
    "count_conflict": MessageCountConflictError,
    "context_conflict": ContextItemDeliveryConflictError,
    "late_conflict": LateAnswerDeliveryConflictError,
    "approval_not_found": ApprovalNotFoundError,
    "exists": SessionExistsError,
}


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a server-side function saw of the session when it refused a write."""

    message_count: int
    first_index: int
    current_run: RunInfo | None
    extra: dict[str, Any]

    @classmethod
    def from_refusal(cls, doc: dict[str, Any]) -> Snapshot:
        """The snapshot a refusal document carries."""
        run = doc.get("run")
        return cls(
            message_count=int(doc["message_count"]),
            first_index=int(doc["first_index"]),
            current_run=None if run is None else RunInfo.model_validate(run),
            extra=doc,
        )


Check = Callable[[Snapshot], None]


def refuse(session_id: str, doc: dict[str, Any], *checks: Check) -> NoReturn:
    """Raise the error of the refusal ``doc`` by running ``checks`` (core's, in order) on it."""
    reason = str(doc["refused"])
    if reason == "session_not_found":
        raise SessionNotFoundError(f"session {session_id!r} not found", session_id=session_id)
    expected = _EXPECTED.get(reason)
    snapshot = Snapshot.from_refusal(doc)
    try:
        for check in checks:
            check(snapshot)
    except StateStoreError as err:
        if expected is not None and type(err) is expected:
            raise
        found = f"raise {type(err).__name__} ({err})"
    else:
        found = "accept it"
    raise StateStoreError(
        f"session {session_id!r}: the server refused the write as {reason!r} but core's "
        f"rules {found}: the SQL mirror of the rules has drifted from core; please report",
        session_id=session_id,
    )


def assert_retained(session_id: str, keep: int, snapshot: Snapshot) -> None:
    """A truncate or rewind to ``keep`` rows cannot reach below the rows retention kept."""
    core_assert_retained(session_id, keep, snapshot.first_index, snapshot.message_count)
