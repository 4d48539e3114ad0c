"""Text at the edges of what SQLite holds: NUL round-trips in text, a lone surrogate is refused."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    ContextItem,
    LateAnswer,
    MessageCommit,
    PendingApproval,
    StoredContextItem,
    ValidationError,
)
from helix_agents.store_sqlite import SQLiteStateStore

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 1, 1, tzinfo=UTC)


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


async def test_list_or_int_as_id_is_a_validation_error_not_unavailable(tmp_path: Path) -> None:
    async with SQLiteStateStore(tmp_path / "v.db") as store:
        for bad in (["a"], 5, b"a"):
            with pytest.raises(ValidationError, match="session_id"):
                await store.get_messages(bad)  # type: ignore[arg-type]
            with pytest.raises(ValidationError, match="session_id"):
                await store.get_session(bad)  # type: ignore[arg-type]


async def test_surrogates_in_records_are_validation_errors_not_serialization_errors(
    tmp_path: Path,
) -> None:
    async with SQLiteStateStore(tmp_path / "v.db") as store:
        await store.create_session("s")
        writes = [
            store.save_checkpoint(
                "s",
                Checkpoint(
                    checkpoint_id="c", run_id="r", message_count=0, state="\ud800", created_at=T0
                ),
            ),
            store.record_late_answer(
                "s", LateAnswer(call_id="c", tool_name="t\udfff", output=1, at=T0)
            ),
            store.add_pending_approvals(
                "s",
                [
                    PendingApproval(
                        approval_id="a",
                        tool_name="t",
                        tool_call_id="c",
                        input={"\ud800": 1},
                        requested_at=T0,
                    )
                ],
            ),
            store.record_context_item(
                "s",
                StoredContextItem(
                    key="k", item=ContextItem(kind="notice", content="\udc00"), at=T0
                ),
            ),
        ]
        for write in writes:
            with pytest.raises(ValidationError, match="lone surrogate"):
                await write
        assert await store.list_checkpoints("s") == []
        assert await store.list_undelivered_late_answers("s") == []
        assert await store.list_pending_approvals("s") == []
        assert await store.list_undelivered_context_items("s") == []
