"""The context store on PostgreSQL: outputs, compactions, and history search in the server.

History search filters rows in the server — the RE2 pattern translated to a
PostgreSQL regex (see ``_regex``) and the tool filter — under a statement
timeout, then matches each candidate with RE2, which decides. A pattern with
no safe translation, a server regex error or a timeout switches the rest of
the search to RE2 in the client, so every pattern RE2 accepts gets the same
answer here as on every other backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
from psycopg import AsyncConnection, sql
from psycopg import errors as pg_errors
from psycopg.rows import tuple_row

from helix_agents.core import ContextMessage, SessionNotFoundError
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
    search_result,
    summary_row,
)
from helix_agents.core.errors import session_not_found
from helix_agents.core.limits import MAX_COUNT
from helix_agents.core.refusals import raise_refusal

from ._base import Row, StoreBase
from ._connect import within
from ._context_sql import ContextStatements
from ._errors import logger, timeout_error
from ._regex import to_postgres

__all__ = ["ContextMixin"]

_T = TypeVar("_T")

SEARCH_TIMEOUT_MS = 2_000
"""How long one server-side search statement may run before the client takes over."""
_CLIENT_BATCH = 2_000


class ContextMixin(OutputReads, StoreBase):
    """:class:`~helix_agents.core.context.ContextStore` for the Postgres store."""

    @property
    def _ctx_sql(self) -> ContextStatements:
        found: ContextStatements | None = self.__dict__.get("_ctx_statements")
        if found is None:
            found = self.__dict__["_ctx_statements"] = ContextStatements.for_schema(self.schema)
        return found

    async def migrate(self) -> list[int]:
        """Apply the pending migrations; then the archive's trigram index, if it can be had."""
        applied = await super().migrate()
        await self._trigram_index()
        return applied

    async def _trigram_index(self) -> None:
        """A ``pg_trgm`` index on the archive's searched text, when the extension is installed.

        The archive only exists where retention runs, so it is the part of a
        history that grows without bound (the live log stays within
        ``max_messages``). Installing the extension is the DBA's call: without
        it, or without the right to create the index, search works unindexed.
        """

        async def work(conn: AsyncConnection[Any]) -> None:
            found = await (
                await conn.execute(
                    "SELECT n.nspname FROM pg_extension e"
                    " JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'"
                )
            ).fetchone()
            if found is None:
                logger.info("pg_trgm is not installed: the archive has no trigram index")
                return
            schema = sql.Identifier(self.schema)
            statement = sql.SQL(
                "CREATE INDEX IF NOT EXISTS __agents_archive_trgm ON {}.__agents_archive"
                " USING gin ({}.__agents_row_text(body) {}.gin_trgm_ops)"
            ).format(schema, schema, sql.Identifier(found[0]))
            try:
                await conn.execute(statement)
            except psycopg.Error as exc:
                logger.warning("no trigram index on the archive (search works without): %s", exc)

        await self._on_connection("migrate", work, write=True)

    def _not_found(self, session_id: str) -> SessionNotFoundError:
        return session_not_found(session_id)

    async def store_output(
        self,
        session_id: str,
        content: str,
        *,
        tool_name: str | None = None,
        key: str | None = None,
    ) -> OutputRef:
        """Store ``content``; a repeat under the same ``key`` returns the first reference."""
        self._ensure_open("store_output", session_id)
        content, tool_name, key = await self._checked(
            session_id, "context", lambda: check_output_args(session_id, content, tool_name, key)
        )
        now = self._clock()
        ref = describe_output(
            content, output_id=new_output_id(), created_at=now, tool_name=tool_name, key=key
        )
        result = await self._call(
            self._ctx_sql.store_output,
            (session_id, ref.output_id, key, ref.model_dump_json(), content, now),
            what="store_output",
            session_id=session_id,
        )
        if "refused" in result:
            raise self._not_found(session_id)
        if "replayed" in result:
            return OutputRef.model_validate(result["replayed"]).model_copy(
                update={"replayed": True}
            )
        return ref

    async def _check_context(self, session_id: str, check: Callable[[], _T]) -> _T:
        return await self._checked(session_id, "context", check)

    async def _load_output(
        self, session_id: str, output_id: str, content: bool
    ) -> tuple[OutputRef, str]:
        rows = await self._session_rows(
            self._ctx_sql.output, (content, output_id, session_id), session_id, "read_output"
        )
        ref, text = rows[0]
        if ref is None:
            raise output_not_found(session_id, output_id)
        return OutputRef.model_validate_json(ref), text or ""

    async def record_compaction(self, session_id: str, compaction: Compaction) -> CompactionResult:
        """Record the summary, the new window start and preservation in one call."""
        self._ensure_open("record_compaction", session_id)
        compaction = await self._checked(
            session_id, "record_compaction", lambda: coerce(Compaction, compaction, session_id)
        )
        result: dict[str, Any] = await self._call(
            self._ctx_sql.compact,
            (
                session_id,
                compaction.boundary,
                compaction.expect_window_start,
                features(compaction.strategy).preserve_history,
                dump_message_json(summary_row(compaction), session_id),
                self._clock(),
            ),
            what="record_compaction",
            session_id=session_id,
        )
        refused = result.get("refused")
        if refused is not None:
            raise_refusal(
                session_id,
                refused,
                [
                    lambda: check_compaction(
                        session_id, compaction, result["start"], result["count"]
                    )
                ],
                server="the PostgreSQL function",
            )
        return CompactionResult(
            window_start=compaction.boundary,
            compactions=result["number"],
            preserved=result["preserved"],
        )

    async def get_window(self, session_id: str) -> ContextWindow:
        """The latest summary row and the rows from the window start on (one statement)."""
        await self._checked(session_id, "get_window", lambda: None)
        rows = await self._session_rows(
            self._ctx_sql.window, (session_id,), session_id, "get_window"
        )
        number, start, summary, preserved, _ = rows[0]
        summary_message = None if summary is None else ContextMessage.model_validate_json(summary)
        return ContextWindow(
            start=start or 0,
            summary=summary_message,
            messages=tuple(parse_message_json(body) for *_, body in rows if body is not None),
            compactions=number or 0,
            preserved=preserved,
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
        self._ensure_open("search_history", session_id)
        query = await self._checked(
            session_id,
            "search_history",
            lambda: HistoryQuery.build(session_id, grep, tool_name, limit),
        )
        await self._counts(session_id, "search_history")
        server = None if query.regex is None else to_postgres(query.regex.pattern)
        in_server = query.regex is None or server is not None
        # A plain substring every match needs: the server skips rows without it cheaply.
        literal = None if grep is None else required_literal(grep)
        hits: list[HistoryHit] = []
        before = MAX_COUNT
        while len(hits) <= query.limit:
            batch = query.limit + 1 if in_server else _CLIENT_BATCH
            params = {
                "sid": session_id,
                "before": before,
                "n": batch,
                "re": server if in_server else None,
                "lit": literal,
                "tool": query.tool_name,
            }
            rows = await self._candidates(session_id, params)
            if rows is None:
                in_server = False  # the server could not run the regex: RE2 decides alone
                continue
            for src, idx, body in rows:
                hit = query.hit(idx, body, archived=bool(src))
                if hit is not None:
                    hits.append(hit)
            if len(rows) < batch:
                break
            before = rows[-1][1]
        return search_result(query, hits)

    async def _candidates(self, session_id: str, params: dict[str, Any]) -> list[Row] | None:
        """One batch of candidate rows, or ``None`` if the server's regex failed or ran long.

        Only a batch filtered by a regex runs under the statement timeout; the
        others are plain reads of the primary key.
        """
        if params["re"] is None:
            return await self._rows(
                self._ctx_sql.candidates, params, what="search_history", session_id=session_id
            )
        self._ensure_open("search_history", session_id)

        async def run(conn: AsyncConnection[Any]) -> list[Row] | None:
            try:
                async with conn.transaction(), conn.cursor(row_factory=tuple_row) as cur:
                    await cur.execute(
                        b"SELECT set_config('statement_timeout', %s, true)",
                        (str(SEARCH_TIMEOUT_MS),),
                        prepare=False,
                    )
                    await cur.execute(self._ctx_sql.candidates, params, prepare=False)
                    rows: list[Row] = await cur.fetchall()
                    return rows
            except (pg_errors.QueryCanceled, pg_errors.InvalidRegularExpression) as exc:
                logger.info("session %r: server search gave up (%s); using RE2", session_id, exc)
                return None

        deadline = self._deadline()
        conn: AsyncConnection[Any] | None = None
        try:
            async with self._pool.connection(timeout=self._left(deadline)) as conn:
                return await within(conn, run(conn), deadline)
        except TimeoutError as exc:
            raise timeout_error(
                what="search_history",
                session_id=session_id,
                timeout=self.operation_timeout,
                may_have_landed=False,
            ) from exc
        except psycopg.Error as exc:
            raise self._wrap(
                exc,
                what="search_history",
                session_id=session_id,
                sent_write=False,
                broken=conn is not None and conn.broken,
            ) from exc
