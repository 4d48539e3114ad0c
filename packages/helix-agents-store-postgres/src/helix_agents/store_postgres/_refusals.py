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
from typing import NoReturn, Required, TypedDict

from helix_agents.core.backend import assert_fence
from helix_agents.core.backend import assert_retained as core_assert_retained
from helix_agents.core.errors import session_not_found
from helix_agents.core.models import RunInfo
from helix_agents.core.refusals import raise_refusal

__all__ = ["RefusalDoc", "RunDoc", "Snapshot", "assert_retained", "refuse", "refuse_fenced"]


class RunDoc(TypedDict):
    """The session's current run in a refusal (``__agents_refusal`` of functions/commit.sql)."""

    run_id: str
    status: str
    started_at: str
    ended_at: str | None


class RefusalDoc(TypedDict, total=False):
    """What a server-side function returns when it refuses a write."""

    refused: Required[str]  # a code of core's REFUSALS
    message_count: int
    first_index: int
    run: RunDoc | None
    # The commit's (functions/commit.sql): whether its run id was used before, and
    # the delivered-at index (None: queued) of each named context item and late answer.
    run_used: bool
    ci: dict[str, int | None]
    la: dict[str, int | None]
    # A compaction's: the window start and the row count it checked against.
    start: int
    count: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a server-side function saw of the session when it refused a write."""

    message_count: int
    first_index: int
    current_run: RunInfo | None

    @classmethod
    def from_refusal(cls, doc: RefusalDoc) -> Snapshot:
        """The snapshot a refusal document carries."""
        run = doc.get("run")
        return cls(
            message_count=int(doc["message_count"]),
            first_index=int(doc["first_index"]),
            current_run=None if run is None else RunInfo.model_validate(run),
        )


Check = Callable[[Snapshot], None]


def refuse(session_id: str, doc: RefusalDoc, *checks: Check) -> NoReturn:
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


def refuse_fenced(
    session_id: str, doc: RefusalDoc, fence_run_id: str | None, *checks: Check
) -> None:
    """If the result ``doc`` of a fenced write is a refusal, raise its error: ``checks``,
    then the fence, run on it."""
    if "refused" in doc:
        refuse(
            session_id,
            doc,
            *checks,
            lambda snap: assert_fence(session_id, fence_run_id, snap.current_run),
        )


def assert_retained(session_id: str, keep: int, snapshot: Snapshot) -> None:
    """A truncate or rewind to ``keep`` rows cannot reach below the rows retention kept."""
    core_assert_retained(session_id, keep, snapshot.first_index, snapshot.message_count)
