"""Turn a refusal returned by a server-side function into core's error.

The server-side functions (``functions/*.sql``) decide *whether* a write is
refused, by mirroring core's rules; the error itself is raised here by replaying core's
own checks on the state the function saw (core's ``raise_refusal``, whose
table ``REFUSALS`` gives each code's error class). So every class, code and
message is core's, and a refusal that core's rules do not reproduce (a drift
between the SQL mirror and core) surfaces as a loud error instead of a wrong answer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from helix_agents.core import RunInfo
from helix_agents.core import assert_retained as core_assert_retained
from helix_agents.core.refusals import raise_refusal, session_not_found

__all__ = ["Snapshot", "assert_retained", "refuse"]


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
    if reason == "session_not_found":  # the document carries no state
        raise session_not_found(session_id)
    snapshot = Snapshot.from_refusal(doc)
    raise_refusal(
        session_id,
        reason,
        [functools.partial(check, snapshot) for check in checks],
        server="the PostgreSQL function",
    )


def assert_retained(session_id: str, keep: int, snapshot: Snapshot) -> None:
    """A truncate or rewind to ``keep`` rows cannot reach below the rows retention kept."""
    core_assert_retained(session_id, keep, snapshot.first_index, snapshot.message_count)
