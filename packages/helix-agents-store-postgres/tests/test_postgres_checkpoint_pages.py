"""A checkpoint page is a backward scan of the primary key, however many checkpoints there are.

White-box: the test EXPLAINs the statement the store sends (``_checkpoint_pages``)
on a session of 3,000 checkpoints, once the planner has statistics.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from psycopg import sql

from helix_agents.core import Checkpoint
from helix_agents.store_postgres import PostgresStateStore
from helix_agents.store_postgres._checkpoint_pages import _PAGE, _render

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def test_page_scans_the_primary_key_backwards(
    pg_url: str, migrated: str, open_store: Callable[..., PostgresStateStore]
) -> None:
    async with open_store() as store:
        sid = (await store.create_session()).id
        other = (await store.create_session()).id
        async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
            table = sql.Identifier(migrated, "__agents_checkpoints")
            rows: list[tuple[Any, ...]] = [
                (s, f"c\x1f{i:05d}", T0, f"c\x1f{i:05d}") for s in (sid, other) for i in range(3000)
            ]
            async with conn.cursor() as cur:
                await cur.executemany(
                    sql.SQL(
                        "INSERT INTO {} (session_id, checkpoint_id, message_count, created_at,"
                        " body) VALUES (%s, %s, 0, %s, jsonb_build_object("
                        " 'checkpoint_id', %s::text, 'run_id', 'r', 'message_count', 0,"
                        " 'state', null, 'created_at', '2026-01-01T00:00:00Z'))"
                    ).format(table),
                    rows,
                )
            await conn.execute(sql.SQL("ANALYZE {}").format(table))
            query = _render(_PAGE.replace("{high}", "AND checkpoint_id < %s::text"), migrated)
            cur = await conn.execute(b"EXPLAIN " + query, ("c\x1f", "c\x1f01000", 10, sid))
            plan = "\n".join(row[0] for row in await cur.fetchall())
        assert "Index Scan Backward using __agents_checkpoints_pkey" in plan, plan
        assert "Seq Scan on __agents_checkpoints" not in plan, plan
        page = await store.page_checkpoints(sid, prefix="c\x1f", before="c\x1f01000", limit=3)
        assert [c.checkpoint_id for c in page] == ["c\x1f00999", "c\x1f00998", "c\x1f00997"]
        assert page[0] == Checkpoint(
            checkpoint_id="c\x1f00999", run_id="r", message_count=0, state=None, created_at=T0
        )
