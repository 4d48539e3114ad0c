"""Row reads: ``get_messages``' edges behave as the reference store's; a head-and-rows
read never mixes two versions of a session."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, cast

import pytest

from helix_agents.core import (
    ChatMessage,
    ContextMessage,
    MessageCommit,
    SessionNotFoundError,
    ValidationError,
)
from helix_agents.core.backend import RowSpan, Want
from helix_agents.store_sqlite import SQLiteStateStore, _reads

pytestmark = pytest.mark.anyio


async def test_limit_is_checked_after_the_session_exists(tmp_path: Path) -> None:
    async with SQLiteStateStore(tmp_path / "r.db") as store:
        for bad in (-1, 2**62 + 1, True, "3"):
            with pytest.raises(SessionNotFoundError):
                await store.get_messages("missing", limit=bad)  # type: ignore[arg-type]
        await store.create_session("s")
        for bad in (-1, 2**62 + 1, True, "3"):
            with pytest.raises(ValidationError, match="limit"):
                await store.get_messages("s", limit=bad)  # type: ignore[arg-type]
        assert await store.get_messages("s") == []
        assert await store.get_messages("s", limit=0) == []
        assert await store.get_messages("s", limit=2**62) == []


async def test_limits_across_retention(tmp_path: Path) -> None:
    rows = [
        ContextMessage(kind="notice", content=f"n{i}")
        if i % 3 == 0
        else ChatMessage(role="user", content=f"r{i}")
        for i in range(9)
    ]
    async with SQLiteStateStore(tmp_path / "r.db", max_messages=4) as store:
        await store.create_session("s")
        for start in range(0, 9, 2):
            await store.append_messages("s", MessageCommit(messages=tuple(rows[start : start + 2])))
            count = min(start + 2, 9)
            retained = rows[max(0, count - 4) : count]
            for limit in (None, 0, 1, 3, 4, 5, 2**62):
                want = retained if limit is None else retained[-limit:] if limit else []
                assert await store.get_messages("s", limit=limit) == want, (count, limit)
        assert await store.is_truncated("s")
        assert await store.get_message_count("s") == 9


class _WriteBetween:
    """A connection on which another writer truncates the session to 3 rows just before
    the first rows' statement of a head-and-rows read."""

    def __init__(self, file: Path) -> None:
        self.reader = sqlite3.connect(file, isolation_level=None)
        self.writer = sqlite3.connect(file, isolation_level=None)
        self.moved = False

    def execute(self, sql: str, args: Any = ()) -> sqlite3.Cursor:
        if sql == _reads._ROWS_AT and not self.moved:
            self.moved = True
            with self.writer:
                self.writer.execute("DELETE FROM __agents_messages WHERE idx >= 3")
                self.writer.execute(
                    "UPDATE __agents_sessions SET message_count = 3, version = version + 1"
                )
        return self.reader.execute(sql, args)


async def test_rows_are_read_again_when_a_write_lands_after_the_head(tmp_path: Path) -> None:
    """A tail read is two statements without a transaction: the rows answer only at the
    head's version, so a write in between sends the read round again, never a mix."""
    rows = [ChatMessage(role="user", content=f"r{i}") for i in range(5)]
    async with SQLiteStateStore(tmp_path / "r.db") as store:
        await store.create_session("s")
        await store.append_messages("s", MessageCommit(messages=tuple(rows)))
    racing = _WriteBetween(tmp_path / "r.db")
    want = Want(rows=RowSpan(0, limit=2, last=True))
    snap = _reads.snapshot(cast(sqlite3.Connection, racing), "s", want)
    assert racing.moved and snap is not None
    assert (snap.message_count, snap.rows_from) == (3, 1)
    assert list(snap.rows) == rows[1:3]
