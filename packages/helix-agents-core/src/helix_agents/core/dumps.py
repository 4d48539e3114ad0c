"""What an export reads of a session beyond a snapshot: every record it holds (EXP-2).

An engine answers :meth:`~helix_agents.core.seam.Engine.dump` with a :class:`SessionDump`
read at one version; docs/export.md names each field's record in the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .context.models import OutputRef
from .models import CommitResult, LateAnswer, StoredContextItem
from .seam import RowSpan, Snapshot, StoredRow, Want

__all__ = ["DUMP_WANT", "SessionDump"]

DUMP_WANT = Want(
    rows=RowSpan(0),
    pending=True,
    checkpoints="all",
    archive=True,
    session_scoped=True,
)
"""What the snapshot of a :class:`SessionDump` answers: every kept row, the pending
approvals, every checkpoint, the archive and the session's scoped map."""


@dataclass(frozen=True, slots=True)
class SessionDump:
    """A session's every record: ``snapshot`` answers :data:`DUMP_WANT`; the rest is what
    no snapshot returns. A queue entry carries the index of the row that delivered it
    (``None`` while queued); ``compactions`` are oldest first (the last is the window)."""

    snapshot: Snapshot
    run_ids: Sequence[str] = ()
    context_items: Sequence[tuple[StoredContextItem, int | None]] = ()
    late_answers: Sequence[tuple[LateAnswer, int | None]] = ()
    resolved: Sequence[str] = ()
    commits: Sequence[tuple[str, CommitResult]] = ()
    outputs: Sequence[tuple[OutputRef, str]] = ()
    compactions: Sequence[tuple[int, StoredRow]] = ()
