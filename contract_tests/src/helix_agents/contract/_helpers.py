"""Builders and read-around helpers shared by the rule tests."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    ContextItem,
    ContextItemDelivery,
    ContextMessage,
    LateAnswer,
    LateAnswerDelivery,
    Message,
    MessageCommit,
    PendingApproval,
    SessionNotFoundError,
    SessionStateStore,
    StartRun,
    StoredContextItem,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class FrozenClock:
    """A clock for the factory's ``clock=`` option: it stands still until a test moves it."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward."""
        self.now += timedelta(seconds=seconds)


def at(seconds: float) -> datetime:
    """A fixed, timezone-aware instant ``seconds`` after the suite's epoch."""
    return T0 + timedelta(seconds=seconds)


def user(text: str = "hello") -> ChatMessage:
    """A user row."""
    return ChatMessage(role="user", content=text)


def assistant(text: str = "hi") -> ChatMessage:
    """An assistant row."""
    return ChatMessage(role="assistant", content=text)


def notice(text: str = "note") -> ContextMessage:
    """A context row of kind ``notice``."""
    return ContextMessage(kind="notice", content=text)


def commit(*rows: Message, **fields: Any) -> MessageCommit:
    """A commit of ``rows`` with the given commit fields."""
    return MessageCommit(messages=rows, **fields)


def start(run_id: str, rewind_to: int | None = None) -> StartRun:
    """A run start."""
    return StartRun(run_id=run_id, rewind_to=rewind_to)


def item(
    key: str,
    seconds: float = 0,
    content: str = "remember this",
    kind: Literal["instruction", "notice"] = "instruction",
) -> StoredContextItem:
    """A queued context item (an instruction unless ``kind`` says otherwise)."""
    return StoredContextItem(key=key, item=ContextItem(kind=kind, content=content), at=at(seconds))


def late(
    call_id: str, seconds: float = 0, output: Any = "done", tool: str = "search"
) -> LateAnswer:
    """A late tool answer."""
    return LateAnswer(call_id=call_id, tool_name=tool, output=output, at=at(seconds))


def item_deliveries(pairs: Iterable[tuple[str, int]]) -> tuple[ContextItemDelivery, ...]:
    """Deliveries of the context items ``key`` at ``row_offset``, for each pair."""
    return tuple(ContextItemDelivery(key=k, row_offset=o) for k, o in pairs)


def late_deliveries(pairs: Iterable[tuple[str, int]]) -> tuple[LateAnswerDelivery, ...]:
    """Deliveries of the late answers ``call_id`` at ``row_offset``, for each pair."""
    return tuple(LateAnswerDelivery(call_id=k, row_offset=o) for k, o in pairs)


def approval(approval_id: str, seconds: float = 0, tool: str = "delete_file") -> PendingApproval:
    """A pending approval."""
    return PendingApproval(
        approval_id=approval_id,
        tool_name=tool,
        tool_call_id=f"call-{approval_id}",
        input={"path": f"/tmp/{approval_id}"},
        requested_at=at(seconds),
    )


def checkpoint(
    checkpoint_id: str,
    message_count: int,
    seconds: float = 0,
    run_id: str = "r1",
    state: Any = None,
) -> Checkpoint:
    """A checkpoint at ``message_count`` rows."""
    return Checkpoint(
        checkpoint_id=checkpoint_id,
        run_id=run_id,
        message_count=message_count,
        state={"step": checkpoint_id} if state is None else state,
        created_at=at(seconds),
    )


@dataclass(frozen=True)
class Queue:
    """One of the two delivery queues, so CI and LA rules share one check each."""

    name: Literal["context item", "late answer"]

    @property
    def is_context(self) -> bool:
        return self.name == "context item"

    def make(
        self, key: str, seconds: float = 0, variant: str = "a"
    ) -> StoredContextItem | LateAnswer:
        if self.is_context:
            return item(key, seconds, content=f"content {variant}")
        return late(key, seconds, output={"variant": variant})

    async def record(
        self,
        store: SessionStateStore,
        sid: str,
        key: str,
        seconds: float = 0,
        variant: str = "a",
        fence_run_id: str | None = None,
    ) -> bool:
        record = self.make(key, seconds, variant)
        if isinstance(record, StoredContextItem):
            result = await store.record_context_item(sid, record, fence_run_id=fence_run_id)
        else:
            result = await store.record_late_answer(sid, record, fence_run_id=fence_run_id)
        return result.recorded

    async def listing(self, store: SessionStateStore, sid: str) -> list[Any]:
        if self.is_context:
            return list(await store.list_undelivered_context_items(sid))
        return list(await store.list_undelivered_late_answers(sid))

    async def keys(self, store: SessionStateStore, sid: str) -> list[str]:
        return [self.key_of(r) for r in await self.listing(store, sid)]

    @staticmethod
    def key_of(record: Any) -> str:
        return record.key if isinstance(record, StoredContextItem) else record.call_id

    def deliver(self, *pairs: tuple[str, int]) -> dict[str, Any]:
        """Commit fields delivering ``(key, row_offset)`` pairs."""
        if self.is_context:
            return {"deliver_context_items": item_deliveries(pairs)}
        return {"deliver_late_answers": late_deliveries(pairs)}


CONTEXT = Queue("context item")
LATE = Queue("late answer")


async def snapshot(store: SessionStateStore, sid: str) -> dict[str, Any]:
    """Everything a caller can read about a session, to prove a refused write changed nothing."""
    info = await store.get_session(sid)
    if info is None:
        return {"exists": False}
    # Deep copies: a store that hands out its own objects must not mutate the "before".
    return copy.deepcopy(
        {
            "info": info,
            "messages": await store.get_messages(sid),
            "count": await store.get_message_count(sid),
            "ui_count": await store.get_ui_message_count(sid),
            "items": await store.list_undelivered_context_items(sid),
            "late": await store.list_undelivered_late_answers(sid),
            "approvals": await store.list_pending_approvals(sid),
            "checkpoints": await store.list_checkpoints(sid),
            "truncated": await store.is_truncated(sid),
            "usage": await store.get_usage(sid),
        }
    )


async def assert_gone(store: SessionStateStore, sid: str) -> None:
    """The session does not exist, and reads of it say so."""
    assert await store.get_session(sid) is None
    try:
        await store.get_message_count(sid)
    except SessionNotFoundError:
        return
    raise AssertionError(f"get_message_count on deleted session {sid!r} did not raise")
