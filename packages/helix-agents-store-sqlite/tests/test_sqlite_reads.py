"""``get_messages`` as one statement: its edges behave as the reference store's."""

from __future__ import annotations

from pathlib import Path

import pytest

from helix_agents.core import (
    ChatMessage,
    ContextMessage,
    MessageCommit,
    SessionNotFoundError,
    ValidationError,
)
from helix_agents.store_sqlite import SQLiteStateStore

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
