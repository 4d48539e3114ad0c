"""The context store protocol's methods on :class:`SQLiteStateStore`."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from helix_agents.core import ValidationError
from helix_agents.core.backend import check_id, coerce
from helix_agents.core.context import (
    DEFAULT_MAX_CHARS,
    Compaction,
    CompactionResult,
    ContextWindow,
    HistoryQuery,
    HistorySearch,
    OutputRef,
    OutputSlice,
    check_output_args,
    check_read_args,
    grep_lines,
    read_lines,
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
    _closed: bool
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


class ContextMethods:
    """:class:`~helix_agents.core.context.ContextStore` for the SQLite store."""

    async def _checked(self: _Hops, session_id: str, check: Callable[[], _T]) -> _T:
        """``check()``; if it refuses the input, a missing session is reported first.

        A closed store, then a malformed session id, are refused before anything else.
        """
        self._db(None if self._closed else self._reader, None)
        check_id(session_id, "session_id")
        try:
            return check()
        except ValidationError:
            await self._read(session_id, load_session, session_id)
            raise

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

    async def get_output(self: _Hops, session_id: str, output_id: str) -> OutputRef:
        """The reference of a stored output."""
        oid = await self._checked(
            session_id, lambda: check_read_args(session_id, output_id, DEFAULT_MAX_CHARS)
        )
        ref, _ = await self._read(session_id, _context.load_output, session_id, oid, False)
        return ref

    async def read_output(
        self: _Hops,
        session_id: str,
        output_id: str,
        *,
        start_line: int = 1,
        end_line: int | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> OutputSlice:
        """Lines ``start_line..end_line`` of a stored output, cut to ``max_chars``."""
        oid = await self._checked(
            session_id, lambda: check_read_args(session_id, output_id, max_chars)
        )

        def read(db: Any) -> OutputSlice:
            _, text = _context.load_output(db, session_id, oid, True)
            return read_lines(
                oid,
                text,
                session_id=session_id,
                start_line=start_line,
                end_line=end_line,
                max_chars=max_chars,
            )

        return await self._read(session_id, read)

    async def grep_output(
        self: _Hops,
        session_id: str,
        output_id: str,
        pattern: str,
        *,
        context_lines: int = 2,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> OutputSlice:
        """Lines of a stored output matching ``pattern``, with context, cut to ``max_chars``."""
        oid = await self._checked(
            session_id, lambda: check_read_args(session_id, output_id, max_chars, context_lines)
        )

        def grep(db: Any) -> OutputSlice:
            _, text = _context.load_output(db, session_id, oid, True)
            return grep_lines(
                oid,
                text,
                pattern,
                session_id=session_id,
                context_lines=context_lines,
                max_chars=max_chars,
            )

        return await self._read(session_id, grep)

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
