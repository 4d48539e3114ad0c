"""Export reads (docs/export.md, EXP-2, EXP-3): a session's every record in one
``REPEATABLE READ`` transaction, and every app and user map of scoped state."""

from __future__ import annotations

import json
from typing import Any

from psycopg import AsyncConnection, sql
from psycopg.rows import tuple_row

from helix_agents.core import CommitResult, JsonObject, LateAnswer, StoredContextItem
from helix_agents.core.backend import DUMP_WANT, SessionDump
from helix_agents.core.context import OutputRef

from ._codec import snapshot, want_json

__all__ = ["Dumps"]

_STATEMENTS = {
    "snapshot": "SELECT * FROM {s}.__agents_snapshot(%s::text, %s::jsonb)",
    "runs": "SELECT run_id FROM {s}.__agents_runs WHERE session_id = %s",
    "queued": "SELECT queue, body, delivered_at FROM {s}.__agents_queued WHERE session_id = %s",
    "resolved": "SELECT approval_id FROM {s}.__agents_approvals WHERE session_id = %s AND resolved",
    "commits": "SELECT commit_id, first_index, message_count FROM {s}.__agents_commits"
    " WHERE session_id = %s",
    "outputs": "SELECT ref, content FROM {s}.__agents_outputs WHERE session_id = %s",
    "compactions": "SELECT boundary, summary FROM {s}.__agents_compactions"
    " WHERE session_id = %s ORDER BY number",
    "maps": "SELECT scope, owner, name, value FROM {s}.__agents_scoped"
    " WHERE scope IN ('app', 'user') ORDER BY scope, owner, name",
}


class Dumps:
    """The export reads on the tables of one schema."""

    def __init__(self, schema: str) -> None:
        quoted = sql.Identifier(schema).as_string()
        self._sql = {k: q.format(s=quoted).encode() for k, q in _STATEMENTS.items()}

    async def dump(self, conn: AsyncConnection[Any], sid: str) -> SessionDump | None:
        """Every record of the session, read in one transaction at one snapshot."""
        async with conn.transaction(), conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(b"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")

            async def rows(name: str, *params: Any) -> list[Any]:
                await cur.execute(self._sql[name], params or (sid,))
                return await cur.fetchall()

            (head,) = await rows("snapshot", sid, want_json(DUMP_WANT))
            snap = snapshot(sid, head, None)
            if snap is None:
                return None
            queued = await rows("queued")
            return SessionDump(
                snapshot=snap,
                run_ids=[rid for (rid,) in await rows("runs")],
                context_items=[
                    (StoredContextItem.model_validate_json(body), at)
                    for queue, body, at in queued
                    if queue == "context"
                ],
                late_answers=[
                    (LateAnswer.model_validate_json(body), at)
                    for queue, body, at in queued
                    if queue == "late"
                ],
                resolved=[aid for (aid,) in await rows("resolved")],
                commits=[
                    (cid, CommitResult(first_index=lo, message_count=hi))
                    for cid, lo, hi in await rows("commits")
                ],
                outputs=[
                    (OutputRef.model_validate_json(ref), json.loads(text))
                    for ref, text in await rows("outputs")
                ],
                compactions=await rows("compactions"),
            )

    async def scoped_maps(self, conn: AsyncConnection[Any]) -> list[tuple[str, str, JsonObject]]:
        """Every app and user map that holds a key, by scope and owner."""
        maps: dict[tuple[str, str], JsonObject] = {}
        async with conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(self._sql["maps"])
            for scope, owner, name, value in await cur.fetchall():
                maps.setdefault((scope, owner), {})[name] = json.loads(value)
        return [(scope, owner, values) for (scope, owner), values in maps.items()]
