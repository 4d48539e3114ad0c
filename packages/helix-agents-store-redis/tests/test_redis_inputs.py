"""Input Redis would store but not give back is refused up front, typed (issue 9)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from helix_agents.core import (
    Checkpoint,
    ContextItem,
    PendingApproval,
    StoredContextItem,
    ValidationError,
)
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 1, 1, tzinfo=UTC)
Factory = Callable[..., RedisStateStore]


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


async def test_deep_session_metadata_refused_so_reads_never_fail(
    standalone_factory: Factory,
) -> None:
    async with standalone_factory() as store:
        with pytest.raises(ValidationError, match="metadata"):
            await store.create_session("deep", metadata={"m": _nested(250)})
        assert await store.get_session("deep") is None
        edge = {"m": _nested(99)}
        await store.create_session("edge", metadata=edge)
        info = await store.get_session("edge")
        assert info is not None and info.metadata == edge
        clone = await store.clone_session("edge")
        assert clone.metadata == edge
        assert await store.list_checkpoints("edge") == []


async def test_nan_and_infinity_refused_not_read_back_as_null(standalone_factory: Factory) -> None:
    async with standalone_factory() as store:
        await store.create_session("s")
        writes = [
            store.save_checkpoint(
                "s",
                Checkpoint(
                    checkpoint_id="p",
                    run_id="r",
                    message_count=0,
                    state=float("inf"),
                    created_at=T0,
                ),
            ),
            store.add_pending_approvals(
                "s",
                [
                    PendingApproval(
                        approval_id="a",
                        tool_name="t",
                        tool_call_id="c",
                        input={"x": float("nan")},
                        requested_at=T0,
                    )
                ],
            ),
            store.record_context_item(
                "s",
                StoredContextItem(
                    key="k",
                    item=ContextItem(kind="notice", content="c", metadata={"x": float("-inf")}),
                    at=T0,
                ),
            ),
        ]
        for write in writes:
            with pytest.raises(ValidationError, match="finite"):
                await write
        assert await store.list_checkpoints("s") == []
        assert await store.list_pending_approvals("s") == []
        assert await store.list_undelivered_context_items("s") == []


async def test_surrogate_ids_on_reads_are_validation_errors(standalone_factory: Factory) -> None:
    async with standalone_factory() as store:
        for read in (
            store.get_session,
            store.delete_session,
            store.get_messages,
            store.get_message_count,
            store.list_sessions,
        ):
            with pytest.raises(ValidationError, match="lone surrogate"):
                await read("s\ud800")
