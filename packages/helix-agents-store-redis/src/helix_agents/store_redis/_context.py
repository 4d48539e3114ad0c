"""The context store on Redis: outputs, compactions and history search in Lua scripts.

Every key is under the session's hash tag, so outputs and the archive go with
the session on delete, clear and idle expiry. History search runs
``r_search`` in bounded steps (at most ``SEARCH_STEP`` rows each, so no step
holds the server long): the script keeps rows containing the pattern's
required literal and the tool name, and RE2 in the client decides.
"""

from __future__ import annotations

import json
from typing import Any

from helix_agents.core import ContextMessage
from helix_agents.core.backend import (
    OutputReads,
    coerce,
    dump_message_json,
    output_not_found,
    parse_message_json,
)
from helix_agents.core.context import (
    Compaction,
    CompactionResult,
    ContextWindow,
    HistoryHit,
    HistoryQuery,
    HistorySearch,
    OutputRef,
    check_compaction,
    check_output_args,
    describe_output,
    features,
    new_output_id,
    required_literal,
    safe_literal,
    search_result,
    summary_row,
)
from helix_agents.core.limits import MAX_COUNT
from helix_agents.core.refusals import raise_refusal

from ._base import StoreBase
from ._errors import SERVER

__all__ = ["SEARCH_STEP", "ContextMixin"]

SEARCH_STEP = 5_000
"""The most rows one search script looks at before handing back to the client."""
_OUTPUT = ("meta", "outr", "out")
_WINDOW = ("meta", "rows", "cmp")
_SEARCH = ("meta", "rows", "arch")


class ContextMixin(OutputReads, StoreBase):
    """:class:`~helix_agents.core.context.ContextStore` for the Redis store."""

    _check_context = StoreBase._checked

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
        ref = describe_output(
            content,
            output_id=new_output_id(),
            created_at=self._clock(),
            tool_name=tool_name,
            key=key,
        )
        args = [ref.output_id, int(key is not None), key or "", ref.model_dump_json(), content]
        reply = await self._run(
            "ctx_store", session_id, [*self._common(session_id), *args], write=True
        )
        if reply[0] == "replayed":
            return OutputRef.model_validate_json(reply[1]).model_copy(update={"replayed": True})
        await self._after(session_id, reply)
        return ref

    async def _load_output(
        self, session_id: str, output_id: str, content: bool
    ) -> tuple[OutputRef, str]:
        reply = await self._run(
            "r_output", session_id, [output_id, int(content)], write=False, keys=_OUTPUT
        )
        if reply[0] == "none":
            raise output_not_found(session_id, output_id)
        return OutputRef.model_validate_json(reply[1]), reply[2] if content else ""

    async def record_compaction(self, session_id: str, compaction: Compaction) -> CompactionResult:
        """Record the summary, the new window start and preservation in one script."""
        compaction = await self._checked(
            session_id, lambda: coerce(Compaction, compaction, session_id)
        )
        args = [
            compaction.boundary,
            -1 if compaction.expect_window_start is None else compaction.expect_window_start,
            int(features(compaction.strategy).preserve_history),
            dump_message_json(summary_row(compaction), session_id),
        ]
        reply = await self._run(
            "ctx_compact", session_id, [*self._common(session_id), *args], write=True
        )
        if reply[0] != "ok":
            raise_refusal(
                session_id,
                reply[0],
                [lambda: check_compaction(session_id, compaction, int(reply[1]), int(reply[2]))],
                server=SERVER,
            )
        await self._after(session_id, reply)
        return CompactionResult(
            window_start=compaction.boundary,
            compactions=int(reply[3]),
            preserved=reply[4] == "1",
        )

    async def get_window(self, session_id: str) -> ContextWindow:
        """The latest summary row and the rows from the window start on (one script)."""
        await self._checked(session_id, lambda: None)
        reply = await self._run("r_window", session_id, [], write=False, keys=_WINDOW)
        _, number, last, preserved, *rows = reply
        start, summary = 0, None
        if last:
            latest: dict[str, Any] = json.loads(last)
            start, summary = latest["b"], ContextMessage.model_validate_json(latest["s"])
        return ContextWindow(
            start=start,
            summary=summary,
            messages=tuple(parse_message_json(row[1:]) for row in rows),
            compactions=int(number),
            preserved=preserved == "1",
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
        literals = []
        if grep is not None and (found := required_literal(grep)) is not None:
            literals.append(found)
        if tool_name is not None and safe_literal(tool_name):
            literals.append(tool_name)
        hits: list[HistoryHit] = []
        before = MAX_COUNT
        while len(hits) <= query.limit and before >= 0:
            reply = await self._run(
                "r_search",
                session_id,
                [before, SEARCH_STEP, *literals],
                write=False,
                keys=_SEARCH,
            )
            before = int(reply[1])
            found_rows = reply[2:]
            for i in range(0, len(found_rows), 3):
                index, archived, body = found_rows[i : i + 3]
                hit = query.hit(int(index), body, archived=archived == 1)
                if hit is not None:
                    hits.append(hit)
        return search_result(query, hits)
