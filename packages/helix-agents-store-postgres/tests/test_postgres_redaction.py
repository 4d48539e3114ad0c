"""RED-6 and ERA-5 on PostgreSQL: once redacted or erased, no table of the store's schema
holds the data."""

from __future__ import annotations

from collections.abc import Callable

import psycopg
import pytest
from psycopg import sql

from helix_agents.contract._helpers import commit, user
from helix_agents.contract.erasure_data import ERASED_TEXT, write_user_data
from helix_agents.contract.redaction_scan import SECRET, redact_secret_rows, write_secret_rows
from helix_agents.store_postgres import PostgresStateStore

pytestmark = pytest.mark.anyio


async def _tables_holding(url: str, schema: str, text: str) -> list[str]:
    """The tables of ``schema`` with a row whose text form holds ``text``."""
    found = []
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        tables = await conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
            "AND table_type = 'BASE TABLE' ORDER BY table_name",
            (schema,),
        )
        names = [name for (name,) in await tables.fetchall()]
        assert "__agents_messages" in names
        for name in names:
            query = sql.SQL("SELECT count(*) FROM {} AS t WHERE strpos(t::text, %s) > 0").format(
                sql.Identifier(schema, name)
            )
            row = await (await conn.execute(query, (text,))).fetchone()
            if row is not None and row[0]:
                found.append(name)
    return found


async def test_redacted_text_leaves_every_table(
    pg_url: str, migrated: str, store_on: Callable[..., PostgresStateStore]
) -> None:
    async with store_on(pg_url) as store:
        await write_secret_rows(store, "s")
        assert await _tables_holding(pg_url, migrated, SECRET) == ["__agents_messages"]
        await redact_secret_rows(store, "s")
        assert await _tables_holding(pg_url, migrated, SECRET) == []
        assert len(await store.list_redactions("s")) == 5


async def test_an_erased_user_leaves_no_table(
    pg_url: str, migrated: str, store_on: Callable[..., PostgresStateStore]
) -> None:
    """ERA-5: no table holds the user's id, the session ids or their text."""
    gone, sids = "erased-user-51c2", ["erased-session-1a", "erased-session-2b"]
    needles = (gone, *sids, ERASED_TEXT)
    async with store_on(pg_url) as store:
        await write_user_data(store, gone, sids)
        await store.create_session("kept", user_id="kept-user-77e0")
        await store.append_messages("kept", commit(user("kept-text-0d9a")))
        for needle in needles:
            assert await _tables_holding(pg_url, migrated, needle)  # seen while stored
        assert await store.erase_user(gone) == sids
        assert [n for n in needles if await _tables_holding(pg_url, migrated, n)] == []
        assert await _tables_holding(pg_url, migrated, "kept-text-0d9a") == ["__agents_messages"]
