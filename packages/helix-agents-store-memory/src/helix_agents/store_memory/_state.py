"""The in-process data a memory store works on, shareable between store instances."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from helix_agents.core.backend import SessionRecords

from ._listing import Listing

__all__ = ["MemoryData", "SessionData"]


@dataclass(slots=True, eq=False)
class SessionData(SessionRecords):
    """A session's records, guarded by its own lock; ``deleted`` once it is gone."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    deleted: bool = False


@dataclass(slots=True, eq=False)
class MemoryData:
    """Sessions by id. Pass one instance to several stores to share their data."""

    sessions: dict[str, SessionData] = field(default_factory=dict)
    listing: Listing = field(default_factory=Listing)
    # app and user maps by (scope, owner), written under ``scoped_lock``.
    scoped: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    scoped_lock: threading.Lock = field(default_factory=threading.Lock)
