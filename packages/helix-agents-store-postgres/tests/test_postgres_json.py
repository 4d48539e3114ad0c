"""JSON fidelity: payloads rest as the JSON text core made, so every read gives back exactly
what was written (floats ``jsonb`` would print positionally, NUL it would refuse)."""

from __future__ import annotations

import math
import random
import struct
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from psycopg import sql

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    LateAnswer,
    MessageCommit,
    ScopedStateDelta,
)
from helix_agents.core.backend import dump_message_json
from helix_agents.core.context import Compaction

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 1, 1, tzinfo=UTC)

_EDGE_FLOATS = [
    1e100,
    5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    1e16,
    1e-05,
    0.1,
    -1e-07,
    123456789012345678.0,
    9007199254740993.0,
    -0.5,
]


def _random_floats(count: int) -> list[float]:
    rng = random.Random(20261130)
    found: list[float] = []
    while len(found) < count:
        (value,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
        if math.isfinite(value):
            found.append(value)
    return found


async def test_store_reads_back_floats_exactly(open_store: Any) -> None:
    """Rows with floats jsonb prints positionally read back exactly, by get and by page."""
    floats = _EDGE_FLOATS + _random_floats(100)
    row = ChatMessage(role="assistant", content="ok", extra={"f": floats, "n": 10**30})
    async with open_store() as store:
        await store.create_session("s")
        await store.append_messages("s", MessageCommit(messages=(row, row)))
        got = await store.get_messages("s", limit=1)
        paged = (await store.page_messages("s", order="desc")).messages
        for back in (*got, *paged):
            assert back == row
            assert back.model_extra is not None
            assert all(type(v) is float for v in back.model_extra["extra"]["f"])
            assert back.model_extra["extra"]["f"] == floats


async def test_a_row_rests_as_the_text_core_made(
    open_store: Any, pg_url: str, migrated: str
) -> None:
    """The body column holds ``dump_message_json(row)``, byte for byte."""
    row = ChatMessage(role="user", content="n\x00l \ue000", extra={"f": [1e100, -0.0]})
    async with open_store() as store:
        await store.create_session("s")
        await store.append_messages("s", MessageCommit(messages=(row,)))
    async with await psycopg.AsyncConnection.connect(pg_url) as conn:
        cur = await conn.execute(
            sql.SQL("SELECT body FROM {} WHERE session_id = 's'").format(
                sql.Identifier(migrated, "__agents_messages")
            )
        )
        assert await cur.fetchall() == [(dump_message_json(row),)]


async def test_every_payload_reads_back_exactly(open_store: Any) -> None:
    """Metadata, queued records, checkpoints, scoped maps, outputs and summaries keep NUL,
    the private-use characters and every float."""
    odd: Any = {"t": "a\x00b\ue000\ue001", "f": _EDGE_FLOATS, "i": 10**30, "k\x00": [1.0]}
    async with open_store(max_messages=1) as store:
        await store.create_session("s", user_id="u", metadata=odd)
        info = await store.get_session("s")
        assert info is not None and info.metadata == odd
        late = LateAnswer(call_id="c", tool_name="t", output=odd, at=T0)
        await store.record_late_answer("s", late)
        assert await store.list_undelivered_late_answers("s") == [late]
        checkpoint = Checkpoint(
            checkpoint_id="p", run_id="r", message_count=0, state=odd, created_at=T0
        )
        await store.save_checkpoint("s", checkpoint)
        assert await store.get_checkpoint("s", "p") == checkpoint
        deltas = tuple(
            ScopedStateDelta(scope=scope, owner=owner, changes={"v": odd})
            for scope, owner in (("app", "a"), ("user", "u"), ("session", None))
        )
        rows = (ChatMessage(role="user", content="x\x00"), ChatMessage(role="user", content="y"))
        await store.append_messages("s", MessageCommit(messages=rows, scoped_state=deltas))
        for scope, owner in (("app", "a"), ("user", "u"), ("session", "s")):
            assert await store.get_scoped_state(scope, owner) == {"v": odd}
        ref = await store.store_output("s", "line\x00one\n\ue000two", key="k")
        assert await store.read_output("s", ref.output_id) is not None
        assert (await store.get_output("s", ref.output_id)).model_dump() == ref.model_dump()
        await store.record_compaction("s", Compaction(boundary=2, summary="sum\x00mary"))
        window = await store.get_window("s")
        assert window.summary is not None and window.summary.content == "sum\x00mary"
        assert [m.content for m in window.messages] == []
        assert await store.get_messages("s") == [rows[1]]
