"""One session's records as Python containers: what an in-process engine keeps."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..context.models import OutputRef
from ..messages import ContextMessage
from ..models import (
    Checkpoint,
    CommitResult,
    LateAnswer,
    PendingApproval,
    RunInfo,
    StoredContextItem,
)

__all__ = ["ContextRecords", "SessionRecords"]


@dataclass(slots=True, eq=False)
class ContextRecords:
    """A session's stored outputs, compactions and archived rows (docs/context-strategies.md)."""

    outputs: dict[str, tuple[OutputRef, str]] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    compactions: list[tuple[int, ContextMessage]] = field(default_factory=list)
    archive: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    preserved: bool = False


@dataclass(slots=True, eq=False)
class SessionRecords:
    """Everything one session holds. Row ``i`` is ``rows[i - first_index]`` (the JSON
    object of the row); a queued record carries the index of the row that delivered
    it, or ``None`` while queued."""

    id: str
    user_id: str | None
    created_at: datetime
    last_activity_at: datetime
    metadata: dict[str, Any]
    version: int = 0
    rows: list[dict[str, Any]] = field(default_factory=list)
    context_flags: list[bool] = field(default_factory=list)
    first_index: int = 0
    ui_count: int = 0  # rows that are not context rows, those retention dropped included
    current_run: RunInfo | None = None
    run_ids: set[str] = field(default_factory=set)
    items: dict[str, tuple[StoredContextItem, int | None]] = field(default_factory=dict)
    late: dict[str, tuple[LateAnswer, int | None]] = field(default_factory=dict)
    approvals: dict[str, PendingApproval] = field(default_factory=dict)
    resolved: set[str] = field(default_factory=set)
    checkpoints: dict[str, Checkpoint] = field(default_factory=dict)
    commits: dict[str, CommitResult] = field(default_factory=dict)
    context: ContextRecords = field(default_factory=ContextRecords)
    # The session's scoped-state map (docs/scoped-state.md); app and user maps are shared.
    scoped: dict[str, Any] = field(default_factory=dict)

    @property
    def message_count(self) -> int:
        """Every row ever kept, those retention dropped included."""
        return self.first_index + len(self.rows)
