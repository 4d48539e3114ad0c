"""The context store protocol's methods on :class:`SQLiteStateStore`."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from helix_agents.core.backend import OutputReads, check_input, coerce
from helix_agents.core.context import (
    Compaction,
    CompactionResult,
    ContextWindow,
    HistoryQuery,
    HistorySearch,
    OutputRef,
    check_output_args,
    search_result,
)

from . import _context
from ._db import Database
from ._rows import load_session

__all__ = ["ContextMethods"]

_T = TypeVar("_T")
_P = ParamSpec("_P")


class _Hops(Protocol):
    """What the methods need of the store: its clock and its write and read hops."""

    _clock: Callable[[], datetime]
    _reader: Database | None

    def _db(self, db: Database | None, sid: str | None) -> Database: ...

    async def _write(
        self,
        sid: str | None,
        op: Callable[Concatenate[sqlite3.Connection, _P], _T],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _T: ...

    async def _read(
        self,
        sid: str | None,
        op: Callable[Concatenate[sqlite3.Connection, _P], _T],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _T: ...

    async def _checked(self, session_id: str, check: Callable[[], _T]) -> _T: ...


class ContextMethods(OutputReads):
    """:class:`~helix_agents.core.context.ContextStore` for the SQLite store."""

    async def _checked(self: _Hops, session_id: str, check: Callable[[], _T]) -> _T:
        """``check()`` once the store is open; a missing session is reported first."""
        self._db(self._reader, None)
        return await check_input(session_id, check, lambda sid: self._read(sid, load_session, sid))

    _check_context = _checked

    async def _load_output(
        self: _Hops, session_id: str, output_id: str, content: bool
    ) -> tuple[OutputRef, str]:
        return await self._read(session_id, _context.load_output, session_id, output_id, content)

    async def store_output(
        self: _Hops,
        session_id: str,
        content: str,
        *,
        tool_name: str | None = None,
        key: str | None = None,
    ) -> OutputRef:
        """Store ``content``; a repeat under the same ``key`` returns the first reference."""
        content, tool_name, key = await self._checked(
            session_id, lambda: check_output_args(session_id, content, tool_name, key)
        )
        return await self._write(
            session_id, _context.store, session_id, content, tool_name, key, self._clock
        )

    async def record_compaction(
        self: _Hops, session_id: str, compaction: Compaction
    ) -> CompactionResult:
        """Record the summary and the new window start in one transaction."""
        compaction = await self._checked(
            session_id, lambda: coerce(Compaction, compaction, session_id)
        )
        return await self._write(session_id, _context.compact, session_id, compaction, self._clock)

    async def get_window(self: _Hops, session_id: str) -> ContextWindow:
        """The latest summary row and the rows from the window start on."""
        await self._checked(session_id, lambda: None)
        return await self._read(session_id, _context.window, session_id)

    async def search_history(
        self: _Hops,
        session_id: str,
        *,
        grep: str | None = None,
        tool_name: str | None = None,
        limit: int = 20,
    ) -> HistorySearch:
        """Rows of the archive and the live log that match, newest first."""
        query = await self._checked(
            session_id, lambda: HistoryQuery.build(session_id, grep, tool_name, limit)
        )
        hits = await self._read(
            session_id, _context.history_hits, session_id, grep, query.tool_name, limit + 1
        )
        return search_result(query, hits)
