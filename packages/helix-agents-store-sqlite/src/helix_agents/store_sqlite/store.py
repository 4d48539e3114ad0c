"""``SQLiteStateStore``: core's :class:`StoreBase` over a :class:`SQLiteEngine`."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from typing import Unpack

from helix_agents.core import ValidationError
from helix_agents.core.backend import ExpiryOptions, StoreBase, utcnow

from ._config import SQLiteConfig, Synchronous
from .engine import SQLiteEngine

__all__ = ["SQLiteStateStore"]


class SQLiteStateStore(StoreBase):
    """Session state in one SQLite file, shared by every store and process that opens it.

    ``async with SQLiteStateStore("agent.db") as store`` opens the file (WAL
    mode, migrations). ``max_messages`` keeps the newest N rows of each session;
    ``busy_timeout`` (seconds) bounds the wait for another writer;
    ``synchronous`` is ``NORMAL`` (survives a process crash) or ``FULL`` (also a
    power loss). ``read_only`` opens an existing, migrated file only and refuses
    every write with :class:`~helix_agents.core.ValidationError`. ``idle_ttl``,
    ``sweep_interval``, ``keep_checkpoints`` and ``checkpoint_ttl`` are the expiry
    options of docs/lifecycle.md.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_messages: int | None = None,
        busy_timeout: float = 5.0,
        synchronous: Synchronous = "NORMAL",
        read_only: bool = False,
        clock: Callable[[], datetime] = utcnow,
        **expiry: Unpack[ExpiryOptions],
    ) -> None:
        try:
            file = os.fspath(path)
        except TypeError:
            raise ValidationError(
                f"SQLite path must be a str or path, got {type(path).__name__}"
            ) from None
        self.config = SQLiteConfig(file, busy_timeout, synchronous, read_only)
        engine = SQLiteEngine(self.config)
        super().__init__(engine, max_messages=max_messages, clock=clock, **expiry)

    @property
    def path(self) -> str:
        """The database file."""
        return self.config.path
