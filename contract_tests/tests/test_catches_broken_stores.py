"""The contract catches broken stores: each wrong variant fails the rule it breaks."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import pytest

from helix_agents.contract import SessionStoreContract
from helix_agents.contract._base import rule_tests
from helix_agents.core import (
    ApprovalResolution,
    CommitResult,
    MessageCommit,
    PendingApproval,
    RecordResult,
    SessionInfo,
    StoredContextItem,
)
from helix_agents.store_memory import MemoryData, MemoryStateStore

pytestmark = pytest.mark.anyio


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
    """Drops rows on truncate but leaves the items they delivered marked delivered."""

    async def truncate_messages(
        self, session_id: str, keep: int, *, fence_run_id: str | None = None
    ) -> None:
        with self._session(session_id) as session:
            saved = dict(session.items), dict(session.late)
        await super().truncate_messages(session_id, keep, fence_run_id=fence_run_id)
        with self._session(session_id) as session:
            session.items, session.late = saved


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


BROKEN = [
    (RepeatOverwrites, "CI-1"),
    (CountCheckedAfterWrite, "EMC-1"),
    (CountCheckedAfterWrite, "EMC-2"),
    (TruncateKeepsDeliveries, "CI-6"),
    (TruncateKeepsDeliveries, "LA-6"),
    (TruncateKeepsDeliveries, "MSG-4"),
    (FenceIgnoredOnRecord, "CI-3"),
    (CloneCopiesItems, "CI-9"),
    (ResolvesEveryTime, "APR-2"),
    (HandsOutStoredObjects, "MSG-6"),
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


def test_state_machine_catches_a_broken_store() -> None:
    from helix_agents.contract import run_state_machine

    data = MemoryData()
    with pytest.raises(Exception) as caught:  # noqa: PT011 - unpacked below
        run_state_machine(lambda **o: TruncateKeepsDeliveries(data, **o), profile="helix-thorough")
    # Hypothesis reports each distinct failure it found (items and late answers).
    failures = getattr(caught.value, "exceptions", [caught.value])
    assert failures
    assert all(isinstance(f, AssertionError) for f in failures), failures
