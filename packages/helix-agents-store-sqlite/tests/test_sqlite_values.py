"""Text at the edges of what SQLite holds: NUL round-trips in text, a lone surrogate is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from helix_agents.core import ChatMessage, MessageCommit, ValidationError
from helix_agents.store_sqlite import SQLiteStateStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_nul_characters_round_trip_in_text_and_are_refused_in_ids(tmp_path: Path) -> None:
    async with SQLiteStateStore(tmp_path / "v.db") as store:
        with pytest.raises(ValidationError, match="NUL"):
            await store.create_session("a\x00b")
        assert await store.get_session("a") is None
        await store.create_session("a")
        row = ChatMessage(role="user", content="x\x00y")
        await store.append_messages("a", MessageCommit(messages=(row,)))
        assert await store.get_messages("a") == [row]


async def test_lone_surrogates_are_validation_errors(tmp_path: Path) -> None:
    async with SQLiteStateStore(tmp_path / "v.db") as store:
        with pytest.raises(ValidationError, match="lone surrogate"):
            await store.create_session("s\ud800")
        await store.create_session("s")
        bad = ChatMessage(role="user", content="x\udc80")
        with pytest.raises(ValidationError, match="lone surrogate"):
            await store.append_messages("s", MessageCommit(messages=(bad,)))
        assert await store.get_message_count("s") == 0
        assert (await store.get_session("s")) is not None
