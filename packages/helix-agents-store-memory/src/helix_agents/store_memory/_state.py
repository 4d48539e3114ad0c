"""The in-process data a memory store works on, shareable between store instances."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from helix_agents.core import (
    Checkpoint,
    CommitResult,
    ContextMessage,
    LateAnswer,
    PendingApproval,
    RunInfo,
    StoredContextItem,
)
from helix_agents.core.context import OutputRef

from ._listing import Listing

__all__ = ["ContextData", "MemoryData", "SessionData"]


@dataclass(slots=True, eq=False)
class ContextData:
    """A session's stored outputs, compactions and archived rows (docs/context-strategies.md)."""

    outputs: dict[str, tuple[OutputRef, str]] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    compactions: list[tuple[int, ContextMessage]] = field(default_factory=list)
    archive: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    preserved: bool = False


@dataclass(slots=True, eq=False)
class SessionData:
    """Everything one session holds; guarded by its own lock."""

    id: str
    user_id: str | None
    created_at: datetime
    last_activity_at: datetime
    metadata: dict[str, Any]
    lock: threading.Lock = field(default_factory=threading.Lock)
    deleted: bool = False
    rows: list[dict[str, Any]] = field(default_factory=list)
    context_flags: list[bool] = field(default_factory=list)
    first_index: int = 0
    dropped_ui: int = 0
    current_run: RunInfo | None = None
    run_ids: set[str] = field(default_factory=set)
    items: dict[str, tuple[StoredContextItem, int | None]] = field(default_factory=dict)
    late: dict[str, tuple[LateAnswer, int | None]] = field(default_factory=dict)
    approvals: dict[str, PendingApproval] = field(default_factory=dict)
    resolved: set[str] = field(default_factory=set)
    checkpoints: dict[str, Checkpoint] = field(default_factory=dict)
    commits: dict[str, CommitResult] = field(default_factory=dict)
    context: ContextData = field(default_factory=ContextData)
    # The session's scoped-state map (docs/scoped-state.md); app and user maps are shared.
    scoped: dict[str, Any] = field(default_factory=dict)

    @property
    def message_count(self) -> int:
        return self.first_index + len(self.rows)


@dataclass(slots=True, eq=False)
class MemoryData:
    """Sessions by id. Pass one instance to several stores to share their data."""

    sessions: dict[str, SessionData] = field(default_factory=dict)
    listing: Listing = field(default_factory=Listing)
    # app and user maps by (scope, owner), written under ``scoped_lock``.
    scoped: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    scoped_lock: threading.Lock = field(default_factory=threading.Lock)
