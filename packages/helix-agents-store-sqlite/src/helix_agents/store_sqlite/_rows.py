"""The session row and the JSON and time codecs every operation shares."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pydantic

from helix_agents.core import SessionInfo
from helix_agents.core.backend import next_activity
from helix_agents.core.errors import session_not_found
from helix_agents.core.models import RunInfo

__all__ = [
    "Clock",
    "SessionRow",
    "dump_model",
    "find_session",
    "from_us",
    "load_session",
    "to_us",
    "touch",
]

Clock = Callable[[], datetime]
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
_SELECT = (
    "SELECT user_id, created_us, last_activity_us, metadata, message_count, first_index, "
    "ui_count, current_run FROM __agents_sessions WHERE session_id = ?"
)


def to_us(at: datetime) -> int:
    """An aware datetime as exact integer microseconds since the epoch (sortable)."""
    return (at - _EPOCH) // _MICRO


def from_us(us: int) -> datetime:
    """The UTC datetime of :func:`to_us`."""
    return _EPOCH + timedelta(microseconds=us)


def dump_model(value: pydantic.BaseModel) -> str:
    """A stored record (item, answer, approval, checkpoint, run) as JSON text."""
    return value.model_dump_json(by_alias=True, exclude_unset=True)


class SessionRow:
    """One ``__agents_sessions`` row: the counters an operation reads and updates.

    The current run is parsed only when an operation asks for it.
    """

    __slots__ = (
        "_run",
        "created_us",
        "first_index",
        "id",
        "last_activity_us",
        "message_count",
        "metadata",
        "run_json",
        "ui_count",
        "user_id",
    )

    def __init__(
        self,
        session_id: str,
        user_id: str | None,
        created_us: int,
        last_activity_us: int,
        metadata: str,
        message_count: int = 0,
        first_index: int = 0,
        ui_count: int = 0,
        run_json: str | None = None,
    ) -> None:
        self.id = session_id
        self.user_id = user_id
        self.created_us = created_us
        self.last_activity_us = last_activity_us
        self.metadata = metadata
        self.message_count = message_count
        self.first_index = first_index
        self.ui_count = ui_count
        self.run_json = run_json
        self._run: RunInfo | None = None

    @property
    def current_run(self) -> RunInfo | None:
        """The session's current (or last) run."""
        if self._run is None and self.run_json is not None:
            self._run = RunInfo.model_validate_json(self.run_json)
        return self._run

    @current_run.setter
    def current_run(self, run: RunInfo) -> None:
        self._run = run
        self.run_json = dump_model(run)

    def info(self) -> SessionInfo:
        """The public view of the row."""
        return SessionInfo(
            id=self.id,
            user_id=self.user_id,
            created_at=from_us(self.created_us),
            last_activity_at=from_us(self.last_activity_us),
            message_count=self.message_count,
            current_run=self.current_run,
            metadata=json.loads(self.metadata),
        )


def find_session(db: sqlite3.Connection, session_id: str) -> SessionRow | None:
    """The session's row, or ``None``."""
    found: tuple[Any, ...] | None = db.execute(_SELECT, (session_id,)).fetchone()
    return None if found is None else SessionRow(session_id, *found)


def load_session(db: sqlite3.Connection, session_id: str) -> SessionRow:
    """The session's row; :class:`SessionNotFoundError` if it does not exist."""
    row = find_session(db, session_id)
    if row is None:
        raise session_not_found(session_id)
    return row


def touch(db: sqlite3.Connection, row: SessionRow, clock: Clock) -> None:
    """Move the session's activity time strictly forward (SES-7)."""
    row.last_activity_us = to_us(next_activity(from_us(row.last_activity_us), clock()))
    db.execute(
        "UPDATE __agents_sessions SET last_activity_us = ? WHERE session_id = ?",
        (row.last_activity_us, row.id),
    )
