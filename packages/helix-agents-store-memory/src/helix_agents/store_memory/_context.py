"""The context store protocol on the memory store: outputs, compactions, history search."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, TypeVar

from helix_agents.core import ValidationError, parse_message
from helix_agents.core.backend import check_id, coerce
from helix_agents.core.context import (
    DEFAULT_MAX_CHARS,
    Compaction,
    CompactionResult,
    ContextWindow,
    HistoryHit,
    HistoryQuery,
    HistorySearch,
    OutputNotFoundError,
    OutputRef,
    OutputSlice,
    check_compaction,
    check_output_args,
    check_read_args,
    compaction_result,
    describe_output,
    grep_lines,
    new_output_id,
    read_lines,
    search_result,
    summary_row,
)

from ._state import SessionData

__all__ = ["ContextMethods"]

_T = TypeVar("_T")


class ContextMethods:
    """:class:`~helix_agents.core.context.ContextStore` for :class:`MemoryStateStore`."""

    _clock: Callable[[], datetime]
    _session: Callable[[str], AbstractContextManager[SessionData]]
    _touch: Callable[[SessionData], None]
    _check_open: Callable[[], None]

    async def _checked(self, session_id: str, check: Callable[[], _T]) -> _T:
        """``check()``; if it refuses the input, a missing session is reported first.

        A closed store, then a malformed session id, are refused before anything else.
        """
        self._check_open()
        check_id(session_id, "session_id")
        try:
            return check()
        except ValidationError:
            with self._session(session_id):
                pass
            raise

    async def store_output(
        self,
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
        with self._session(session_id) as session:
            ctx = session.context
            if key is not None and key in ctx.keys:
                first = ctx.outputs[ctx.keys[key]][0]
                return first.model_copy(update={"replayed": True})
            ref = describe_output(
                content,
                output_id=new_output_id(),
                created_at=self._clock(),
                tool_name=tool_name,
                key=key,
            )
            ctx.outputs[ref.output_id] = (ref, content)
            if key is not None:
                ctx.keys[key] = ref.output_id
            self._touch(session)
            return ref

    def _output(self, session_id: str, output_id: str) -> tuple[OutputRef, str]:
        with self._session(session_id) as session:
            found = session.context.outputs.get(output_id)
        if found is None:
            raise OutputNotFoundError(
                f"session {session_id!r} has no stored output {output_id!r}",
                session_id=session_id,
            )
        return found

    async def get_output(self, session_id: str, output_id: str) -> OutputRef:
        """The reference of a stored output."""
        oid = await self._checked(
            session_id, lambda: check_read_args(session_id, output_id, DEFAULT_MAX_CHARS)
        )
        return self._output(session_id, oid)[0]

    async def read_output(
        self,
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
        _, text = self._output(session_id, oid)
        return read_lines(
            oid,
            text,
            session_id=session_id,
            start_line=start_line,
            end_line=end_line,
            max_chars=max_chars,
        )

    async def grep_output(
        self,
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
        _, text = self._output(session_id, oid)
        return grep_lines(
            oid,
            text,
            pattern,
            session_id=session_id,
            context_lines=context_lines,
            max_chars=max_chars,
        )

    async def record_compaction(self, session_id: str, compaction: Compaction) -> CompactionResult:
        """Record the summary and the new window start in one step."""
        compaction = await self._checked(
            session_id, lambda: coerce(Compaction, compaction, session_id)
        )
        with self._session(session_id) as session:
            ctx = session.context
            start = ctx.compactions[-1][0] if ctx.compactions else 0
            check_compaction(session_id, compaction, start, session.message_count)
            number = len(ctx.compactions) + 1
            result = compaction_result(compaction, number, ctx.preserved)
            ctx.compactions.append((compaction.boundary, summary_row(compaction)))
            ctx.preserved = result.preserved
            self._touch(session)
            return result

    async def get_window(self, session_id: str) -> ContextWindow:
        """The latest summary row and the rows from the window start on."""
        await self._checked(session_id, lambda: None)
        with self._session(session_id) as session:
            ctx = session.context
            start, summary = ctx.compactions[-1] if ctx.compactions else (0, None)
            skip = max(0, start - session.first_index)
            rows = tuple(parse_message(row) for row in session.rows[skip:])
            return ContextWindow(
                start=start,
                summary=summary,
                messages=rows,
                compactions=len(ctx.compactions),
                preserved=ctx.preserved,
            )

    async def search_history(
        self,
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
        with self._session(session_id) as session:
            # Copies of the lists (rows are never changed in place): the search runs unlocked.
            first, live = session.first_index, list(session.rows)
            archive = list(session.context.archive)
        return search_result(query, _hits(query, first, live, archive))


def _hits(
    query: HistoryQuery,
    first: int,
    live: list[dict[str, Any]],
    archive: list[tuple[int, dict[str, Any]]],
) -> Iterator[HistoryHit]:
    found = 0
    newest_first = itertools.chain(
        ((first + i, live[i], False) for i in range(len(live) - 1, -1, -1)),
        ((index, row, True) for index, row in reversed(archive)),
    )
    for index, row, archived in newest_first:
        hit = query.hit(index, row, archived=archived)
        if hit is not None:
            yield hit
            found += 1
            if found > query.limit:
                return
