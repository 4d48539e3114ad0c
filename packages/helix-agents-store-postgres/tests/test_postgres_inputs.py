"""Input the server could not take is refused up front, typed and never retryable (issue 9)."""

from __future__ import annotations

import base64
import os
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    LateAnswer,
    MessageCommit,
    StartRun,
    ValidationError,
)

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value}
    return value


async def test_deep_provider_field_refused_before_write(open_store: Any) -> None:
    async with open_store() as store:
        await store.create_session("s")
        deep = ChatMessage(role="assistant", content=None, tool_calls=_nested(250))
        with pytest.raises(ValidationError, match="deeper than 100"):
            await store.append_messages("s", MessageCommit(messages=(deep,)))
        edge = ChatMessage(role="assistant", content=None, tool_calls=_nested(100))
        await store.append_messages("s", MessageCommit(messages=(edge,)))
        assert await store.get_messages("s") == [edge]
        assert (await store.page_messages("s", order="desc")).messages == (edge,)


async def test_nan_in_checkpoint_state_and_late_output_refused_not_value_error(
    open_store: Any,
) -> None:
    async with open_store() as store:
        await store.create_session("s")
        with pytest.raises(ValidationError, match="finite"):
            await store.save_checkpoint(
                "s",
                Checkpoint(
                    checkpoint_id="p",
                    run_id="r",
                    message_count=0,
                    state={"loss": float("nan")},
                    created_at=T0,
                ),
            )
        with pytest.raises(ValidationError, match="finite"):
            await store.record_late_answer(
                "s", LateAnswer(call_id="c", tool_name="t", output=[float("-inf")], at=T0)
            )
        assert await store.list_checkpoints("s") == []
        assert await store.list_undelivered_late_answers("s") == []


@pytest.mark.parametrize("bad", ["s\ud800", 5, b"s", "k" * 10_240])
async def test_unstorable_ids_on_reads_are_validation_errors_not_unavailable(
    open_store: Any, bad: Any
) -> None:
    async with open_store() as store:
        for read in (
            store.get_session,
            store.delete_session,
            store.get_messages,
            store.get_message_count,
            store.list_checkpoints,
            store.list_sessions,
        ):
            with pytest.raises(ValidationError) as refused:
                await read(bad)
            assert not refused.value.retryable


async def test_surrogate_run_or_commit_id_is_validation_error_not_unavailable(
    open_store: Any,
) -> None:
    async with open_store() as store:
        await store.create_session("s")
        for commit in (
            MessageCommit(start_run=StartRun(run_id="r\udfff")),
            MessageCommit(commit_id="c\ud800"),
            MessageCommit(fence_run_id="f\ud800"),
        ):
            with pytest.raises(ValidationError, match="lone surrogate"):
                await store.append_messages("s", commit)
        with pytest.raises(ValidationError, match="run_id"):
            await store.finish_run("s", "r\ud800", "completed")
        with pytest.raises(ValidationError, match="fence_run_id"):
            await store.truncate_messages("s", 0, fence_run_id="\ud800")
        info = await store.get_session("s")
        assert info is not None and info.current_run is None and info.message_count == 0


async def test_incompressible_ten_kilobyte_ids_on_writes_are_validation_errors(
    open_store: Any,
) -> None:
    """Ids past a btree row (and past MAX_ID_BYTES) never reach the server as a retryable error."""
    big = base64.b64encode(os.urandom(7_680)).decode()  # 10,240 random characters
    edge = base64.b64encode(os.urandom(384)).decode()  # 512: the longest id, indexed fine
    async with open_store() as store:
        await store.create_session("s")
        writes: tuple[Callable[[str], Awaitable[object]], ...] = (
            lambda i: store.create_session(i),
            lambda i: store.create_session(user_id=i),
            lambda i: store.append_messages("s", MessageCommit(start_run=StartRun(run_id=i))),
            lambda i: store.append_messages("s", MessageCommit(commit_id=i)),
            lambda i: store.save_checkpoint(
                "s",
                Checkpoint(checkpoint_id=i, run_id="r", message_count=0, state={}, created_at=T0),
            ),
        )
        for write in writes:
            with pytest.raises(ValidationError, match="10240 bytes") as refused:
                await write(big)
            assert not refused.value.retryable
        info = await store.get_session("s")
        assert info is not None and info.current_run is None and info.message_count == 0
        assert await store.list_checkpoints("s") == []
        for write in writes:
            await write(edge)
        assert (await store.get_session(edge)) is not None
        assert (await store.get_checkpoint("s", edge)) is not None
