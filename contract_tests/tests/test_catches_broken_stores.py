"""The contract catches broken stores: each wrong variant fails the rule it breaks."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import pytest

from helix_agents.contract import SessionStoreContract
from helix_agents.contract._base import rule_tests
from helix_agents.core import (
    ApprovalResolution,
    CommitResult,
    Message,
    MessageCommit,
    MessageCountConflictError,
    PendingApproval,
    RecordResult,
    SessionInfo,
    StoredContextItem,
)
from helix_agents.store_memory import MemoryData, MemoryStateStore

pytestmark = pytest.mark.anyio
_T = TypeVar("_T")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class RepeatOverwrites(MemoryStateStore):
    """A repeat record replaces the queued item instead of being ignored."""

    async def record_context_item(
        self, session_id: str, record: StoredContextItem, *, fence_run_id: str | None = None
    ) -> RecordResult:
        with self._session(session_id) as session:
            existing = session.items.get(record.key)
            if existing is not None and existing[1] is None:
                session.items[record.key] = (record, None)
                return RecordResult(recorded=False)
        return await super().record_context_item(session_id, record, fence_run_id=fence_run_id)


class CountCheckedAfterWrite(MemoryStateStore):
    """Writes the rows first and checks the expected count afterwards."""

    async def append_messages(self, session_id: str, commit: MessageCommit) -> CommitResult:
        expected = commit.expect_message_count
        result = await super().append_messages(
            session_id, commit.model_copy(update={"expect_message_count": None})
        )
        if expected is not None and commit.start_run is None and expected != result.first_index:
            from helix_agents.core import MessageCountConflictError

            raise MessageCountConflictError("stale", session_id=session_id)
        return result


class TruncateKeepsDeliveries(MemoryStateStore):
    """Drops rows on truncate, pop and replace but leaves the items they delivered delivered."""

    async def _keeping_deliveries(self, session_id: str, cut: Callable[[], Awaitable[_T]]) -> _T:
        with self._session(session_id) as session:
            saved = dict(session.items), dict(session.late)
        result = await cut()
        with self._session(session_id) as session:
            session.items, session.late = saved
        return result

    async def truncate_messages(
        self, session_id: str, keep: int, *, fence_run_id: str | None = None
    ) -> None:
        await self._keeping_deliveries(
            session_id,
            lambda: super(TruncateKeepsDeliveries, self).truncate_messages(
                session_id, keep, fence_run_id=fence_run_id
            ),
        )

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        return await self._keeping_deliveries(
            session_id,
            lambda: super(TruncateKeepsDeliveries, self).pop_messages(
                session_id, count, fence_run_id=fence_run_id
            ),
        )

    async def replace_messages(
        self,
        session_id: str,
        keep: int,
        messages: Sequence[Message],
        *,
        expect_message_count: int,
        fence_run_id: str | None = None,
    ) -> CommitResult:
        return await self._keeping_deliveries(
            session_id,
            lambda: super(TruncateKeepsDeliveries, self).replace_messages(
                session_id,
                keep,
                messages,
                expect_message_count=expect_message_count,
                fence_run_id=fence_run_id,
            ),
        )


class FenceIgnoredOnRecord(MemoryStateStore):
    """Records context items whatever run is current."""

    async def record_context_item(
        self, session_id: str, record: StoredContextItem, *, fence_run_id: str | None = None
    ) -> RecordResult:
        return await super().record_context_item(session_id, record)


class CloneCopiesItems(MemoryStateStore):
    """Copies the queued context items into the clone."""

    async def clone_session(
        self, source_id: str, target_id: str | None = None, *, up_to: int | None = None
    ) -> SessionInfo:
        info = await super().clone_session(source_id, target_id, up_to=up_to)
        for record in await self.list_undelivered_context_items(source_id):
            await self.record_context_item(info.id, record)
        return info


class ResolvesEveryTime(MemoryStateStore):
    """Says ``resolved`` to every caller of a known approval."""

    async def resolve_approval(self, session_id: str, approval_id: str) -> ApprovalResolution:
        answer = await super().resolve_approval(session_id, approval_id)
        return "resolved" if answer == "already-resolved" else answer


class HandsOutStoredObjects(MemoryStateStore):
    """Keeps the caller's approval objects and hands the same ones back."""

    async def add_pending_approvals(
        self,
        session_id: str,
        approvals: Sequence[PendingApproval],
        *,
        fence_run_id: str | None = None,
    ) -> None:
        with self._session(session_id) as session:
            for approval in approvals:
                session.approvals.setdefault(approval.approval_id, approval)

    async def list_pending_approvals(self, session_id: str) -> list[PendingApproval]:
        with self._session(session_id) as session:
            return sorted(session.approvals.values(), key=lambda a: a.requested_at)


class PopByReadThenTruncate(MemoryStateStore):
    """Pops as a client of the older protocol must: count, read the last rows, truncate.

    Each step is its own call, as over a network (the awaits let other writers in).
    """

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        total = await self.get_message_count(session_id)
        await asyncio.sleep(0)
        rows = await self.get_messages(session_id, limit=count)
        await asyncio.sleep(0)
        await self.truncate_messages(session_id, total - len(rows), fence_run_id=fence_run_id)
        return rows


class ReplaceCheckedThenWritten(MemoryStateStore):
    """Checks the expected count, then cuts and appends in a later call."""

    async def replace_messages(
        self,
        session_id: str,
        keep: int,
        messages: Sequence[Message],
        *,
        expect_message_count: int,
        fence_run_id: str | None = None,
    ) -> CommitResult:
        if await self.get_message_count(session_id) != expect_message_count:
            raise MessageCountConflictError("stale", session_id=session_id)
        await asyncio.sleep(0)
        await self.truncate_messages(session_id, keep, fence_run_id=fence_run_id)
        return await self.append_messages(session_id, MessageCommit(messages=tuple(messages)))


class PopNewestFirst(MemoryStateStore):
    """Returns the popped rows newest first."""

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        popped = await super().pop_messages(session_id, count, fence_run_id=fence_run_id)
        return popped[::-1]


BROKEN = [
    (RepeatOverwrites, "CI-1"),
    (CountCheckedAfterWrite, "EMC-1"),
    (CountCheckedAfterWrite, "EMC-2"),
    (TruncateKeepsDeliveries, "CI-6"),
    (TruncateKeepsDeliveries, "LA-6"),
    (TruncateKeepsDeliveries, "MSG-4"),
    (TruncateKeepsDeliveries, "MSG-7"),
    (TruncateKeepsDeliveries, "MSG-8"),
    (FenceIgnoredOnRecord, "CI-3"),
    (CloneCopiesItems, "CI-9"),
    (ResolvesEveryTime, "APR-2"),
    (HandsOutStoredObjects, "MSG-6"),
    (PopByReadThenTruncate, "MSG-9"),
    (ReplaceCheckedThenWritten, "MSG-10"),
    (PopNewestFirst, "MSG-7"),
]


def _rule(rule_id: str) -> Any:
    [func] = [f for rid, f in rule_tests(SessionStoreContract).values() if rid == rule_id]
    return func


async def _run_rule(store_cls: type[MemoryStateStore], rule_id: str) -> None:
    data = MemoryData()

    def factory(**options: Any) -> MemoryStateStore:
        return store_cls(data, **options)

    func = _rule(rule_id)
    suite = SessionStoreContract()
    if "store" in inspect.signature(func).parameters:
        async with factory() as store:
            await func(suite, store)
    else:
        await func(suite, factory)


@pytest.mark.parametrize(
    ("store_cls", "rule_id"), BROKEN, ids=[f"{c.__name__}-{r}" for c, r in BROKEN]
)
async def test_broken_store_fails_its_rule(store_cls: type[MemoryStateStore], rule_id: str) -> None:
    await _run_rule(MemoryStateStore, rule_id)  # the rule holds for the reference store
    # A broken rule shows as a failed assert or a pytest.raises that did not raise.
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        await _run_rule(store_cls, rule_id)


@pytest.mark.parametrize("store_cls", [TruncateKeepsDeliveries, PopNewestFirst])
def test_state_machine_catches_a_broken_store(store_cls: type[MemoryStateStore]) -> None:
    from helix_agents.contract import run_state_machine

    data = MemoryData()
    with pytest.raises(Exception) as caught:  # noqa: PT011 - unpacked below
        run_state_machine(lambda **o: store_cls(data, **o), profile="helix-thorough")
    # Hypothesis reports each distinct failure it found (items and late answers).
    failures = getattr(caught.value, "exceptions", [caught.value])
    assert failures
    assert all(isinstance(f, AssertionError) for f in failures), failures
