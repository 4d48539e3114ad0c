"""The contract catches broken stores: each wrong variant fails the rule test it breaks.

Every broken store wraps a correct memory store and forwards every call to it
through the public API, except the one behaviour it gets wrong (in a way a real
implementation plausibly would); the same rule test passes on the correct store.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Sequence
from typing import Any, Literal

import pytest
from hypothesis import Phase, settings

from helix_agents.contract import SessionStoreContract, run_state_machine
from helix_agents.contract._base import rule_tests
from helix_agents.core import (
    Checkpoint,
    CommitResult,
    Message,
    MessageCommit,
    MessageCountConflictError,
    MessagePage,
    PendingApproval,
    RecordResult,
    SessionInfo,
    SessionNotFoundError,
    SessionsPage,
    SessionStateStore,
    StateStoreError,
    StoredContextItem,
)
from helix_agents.core.models import ApprovalResolution, SessionSummary
from helix_agents.store_memory import MemoryData, MemoryStateStore

pytestmark = pytest.mark.anyio


class Wrapper:
    """Forwards every call to ``inner``; subclasses override what they break."""

    def __init__(self, inner: SessionStateStore) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def __aenter__(self) -> Wrapper:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.inner.__aexit__(*exc)


# --- blunt breaks of single rules ---------------------------------------------------------


class RepeatOverwrites(Wrapper):
    """A repeat record replaces the queued item instead of being ignored."""

    def __init__(self, inner: SessionStateStore) -> None:
        super().__init__(inner)
        self.latest: dict[tuple[str, str], StoredContextItem] = {}

    async def record_context_item(
        self, session_id: str, record: StoredContextItem, *, fence_run_id: str | None = None
    ) -> RecordResult:
        result = await self.inner.record_context_item(session_id, record, fence_run_id=fence_run_id)
        if not result.recorded:
            self.latest[session_id, record.key] = record
        return result

    async def list_undelivered_context_items(self, session_id: str) -> list[StoredContextItem]:
        listed = await self.inner.list_undelivered_context_items(session_id)
        return [self.latest.get((session_id, r.key), r) for r in listed]


class CountCheckedAfterWrite(Wrapper):
    """Writes the rows first and checks the expected count afterwards."""

    async def append_messages(self, session_id: str, commit: MessageCommit) -> CommitResult:
        expected = commit.expect_message_count
        result = await self.inner.append_messages(
            session_id, commit.model_copy(update={"expect_message_count": None})
        )
        if expected is not None and commit.start_run is None and expected != result.first_index:
            raise MessageCountConflictError("stale", session_id=session_id)
        return result


class TruncateKeepsDeliveries(Wrapper):
    """Items and late answers delivered by rows a cut removes stay out of the listings."""

    def __init__(self, inner: SessionStateStore) -> None:
        super().__init__(inner)
        self.hidden: set[tuple[str, str]] = set()

    async def _cut(self, session_id: str, cut: Any) -> Any:
        before = await self._listed(session_id)
        result = await cut()
        self.hidden |= {(session_id, k) for k in await self._listed(session_id) - before}
        return result

    async def _listed(self, session_id: str) -> set[str]:
        items = await self.inner.list_undelivered_context_items(session_id)
        answers = await self.inner.list_undelivered_late_answers(session_id)
        return {i.key for i in items} | {a.call_id for a in answers}

    def _shown(self, session_id: str, key: str) -> bool:
        return (session_id, key) not in self.hidden

    async def truncate_messages(
        self, session_id: str, keep: int, *, fence_run_id: str | None = None
    ) -> None:
        await self._cut(
            session_id,
            lambda: self.inner.truncate_messages(session_id, keep, fence_run_id=fence_run_id),
        )

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        popped: list[Message] = await self._cut(
            session_id,
            lambda: self.inner.pop_messages(session_id, count, fence_run_id=fence_run_id),
        )
        return popped

    async def replace_messages(self, session_id: str, *args: Any, **kwargs: Any) -> CommitResult:
        result: CommitResult = await self._cut(
            session_id, lambda: self.inner.replace_messages(session_id, *args, **kwargs)
        )
        return result

    async def list_undelivered_context_items(self, session_id: str) -> list[StoredContextItem]:
        listed = await self.inner.list_undelivered_context_items(session_id)
        return [r for r in listed if self._shown(session_id, r.key)]

    async def list_undelivered_late_answers(self, session_id: str) -> list[Any]:
        listed = await self.inner.list_undelivered_late_answers(session_id)
        return [a for a in listed if self._shown(session_id, a.call_id)]


class FenceIgnoredOnRecord(Wrapper):
    """Records context items whatever run is current."""

    async def record_context_item(
        self, session_id: str, record: StoredContextItem, *, fence_run_id: str | None = None
    ) -> RecordResult:
        return await self.inner.record_context_item(session_id, record)


class CloneCopiesItems(Wrapper):
    """Copies the queued context items into the clone."""

    async def clone_session(
        self, source_id: str, target_id: str | None = None, *, up_to: int | None = None
    ) -> SessionInfo:
        info = await self.inner.clone_session(source_id, target_id, up_to=up_to)
        for record in await self.inner.list_undelivered_context_items(source_id):
            await self.inner.record_context_item(info.id, record)
        return info


class ResolvesEveryTime(Wrapper):
    """Says ``resolved`` to every caller of a known approval."""

    async def resolve_approval(self, session_id: str, approval_id: str) -> ApprovalResolution:
        answer = await self.inner.resolve_approval(session_id, approval_id)
        return "resolved" if answer == "already-resolved" else answer


class PopByReadThenTruncate(Wrapper):
    """Pops as a client of the older protocol must: count, read the last rows, truncate."""

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        total = await self.inner.get_message_count(session_id)
        await asyncio.sleep(0)  # each step its own call, as over a network
        rows = await self.inner.get_messages(session_id, limit=count)
        await asyncio.sleep(0)
        await self.inner.truncate_messages(session_id, total - len(rows), fence_run_id=fence_run_id)
        return rows


class ReplaceCheckedThenWritten(Wrapper):
    """Checks the expected count, then cuts and appends in later calls."""

    async def replace_messages(
        self, session_id: str, keep: int, messages: Sequence[Message], **options: Any
    ) -> CommitResult:
        # ``options``: the protocol's keywords, ``expect_message_count`` and ``fence_run_id``.
        if await self.inner.get_message_count(session_id) != options["expect_message_count"]:
            raise MessageCountConflictError("stale", session_id=session_id)
        await asyncio.sleep(0)
        fence = options.get("fence_run_id")
        await self.inner.truncate_messages(session_id, keep, fence_run_id=fence)
        return await self.inner.append_messages(session_id, MessageCommit(messages=tuple(messages)))


class PopNewestFirst(Wrapper):
    """Returns the popped rows newest first."""

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        popped = await self.inner.pop_messages(session_id, count, fence_run_id=fence_run_id)
        return popped[::-1]


class DescCursorCountsFromNewest(Wrapper):
    """A ``desc`` cursor is the number of rows already seen, counted from the newest row."""

    async def page_messages(
        self,
        session_id: str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        order: Literal["asc", "desc"] = "asc",
    ) -> MessagePage:
        if order == "asc":
            return await self.inner.page_messages(session_id, limit=limit, cursor=cursor)
        seen = int(cursor) if cursor else 0
        rows = (await self.inner.get_messages(session_id))[::-1]
        page = rows[seen : seen + limit]
        more = seen + limit < len(rows)
        return MessagePage(messages=page, next_cursor=str(seen + limit) if more else None)


class PagesCappedAtTen(Wrapper):
    """Quietly serves at most ten rows a page, whatever ``limit`` asks for."""

    async def page_messages(
        self, session_id: str, *, limit: int = 50, **kwargs: Any
    ) -> MessagePage:
        return await self.inner.page_messages(session_id, limit=min(limit, 10), **kwargs)


class _OwnListing(Wrapper):
    """Lists sessions from the inner listings, in an order and with cursors of its own."""

    def __init__(self, inner: SessionStateStore) -> None:
        super().__init__(inner)
        self.users: dict[str, str | None] = {}

    async def create_session(
        self, session_id: str | None = None, *, user_id: str | None = None, **kwargs: Any
    ) -> SessionInfo:
        info = await self.inner.create_session(session_id, user_id=user_id, **kwargs)
        self.users[info.id] = user_id
        return info

    def owners(self, user_id: str) -> set[str]:
        return {user_id}

    async def list_sessions(
        self, user_id: str, *, first: int = 20, cursor: str | None = None
    ) -> SessionsPage:
        found: list[SessionSummary] = []
        for owner in self.owners(user_id):
            found += (await self.inner.list_sessions(owner, first=500)).sessions
        order = list(self.users)
        found.sort(key=lambda s: (-s.last_activity_at.timestamp(), self.tie(s.id, order)))
        start = int(cursor.split("|")[1]) if cursor else 0
        more = start + first < len(found)
        return SessionsPage(
            sessions=found[start : start + first],
            next_cursor=f"{user_id}|{start + first}" if more else None,
        )

    def tie(self, session_id: str, order: list[str]) -> Any:
        return session_id


class ListingByUserPrefix(_OwnListing):
    """Lists the sessions of every user whose id starts with the one asked for (a LIKE 'u%')."""

    def owners(self, user_id: str) -> set[str]:
        return {u for u in self.users.values() if u is not None and u.startswith(user_id)}


class TiesByCreationOrder(_OwnListing):
    """Breaks ties of activity time by creation order instead of by id."""

    def tie(self, session_id: str, order: list[str]) -> Any:
        return order.index(session_id)


# --- aliasing, scale, interplay, flags, fields ----------------------------------------------


class HandsOutStoredObjects(Wrapper):
    """Keeps the caller's approval objects and hands the same ones back."""

    def __init__(self, inner: SessionStateStore) -> None:
        super().__init__(inner)
        self.kept: dict[str, PendingApproval] = {}

    async def add_pending_approvals(
        self, session_id: str, approvals: Sequence[PendingApproval], **kwargs: Any
    ) -> None:
        await self.inner.add_pending_approvals(session_id, approvals, **kwargs)
        for approval in approvals:
            self.kept.setdefault(approval.approval_id, approval)

    async def list_pending_approvals(self, session_id: str) -> list[PendingApproval]:
        listed = await self.inner.list_pending_approvals(session_id)
        return [self.kept.get(a.approval_id, a) for a in listed]


class SharesCheckpointObjects(Wrapper):
    """Caches each checkpoint it saved and serves the cached object from every checkpoint read."""

    def __init__(self, inner: SessionStateStore) -> None:
        super().__init__(inner)
        self.kept: dict[tuple[str, str], Checkpoint] = {}

    def _same(self, session_id: str, saved: Checkpoint | None) -> Checkpoint | None:
        if saved is None:
            return None
        return self.kept.setdefault((session_id, saved.checkpoint_id), saved)

    async def get_checkpoint(self, session_id: str, checkpoint_id: str) -> Checkpoint | None:
        return self._same(session_id, await self.inner.get_checkpoint(session_id, checkpoint_id))

    async def latest_checkpoint(self, session_id: str) -> Checkpoint | None:
        return self._same(session_id, await self.inner.latest_checkpoint(session_id))

    async def list_checkpoints(self, session_id: str) -> list[Checkpoint]:
        listed = await self.inner.list_checkpoints(session_id)
        return [self.kept.setdefault((session_id, c.checkpoint_id), c) for c in listed]


class ListsTenAtMost(Wrapper):
    """Lists at most ten undelivered context items (a LIMIT 10 left in the query)."""

    async def list_undelivered_context_items(self, session_id: str) -> list[StoredContextItem]:
        return (await self.inner.list_undelivered_context_items(session_id))[:10]


class ChecksOnlyFirstDelivery(Wrapper):
    """Checks the first delivery of a commit; later ones it cannot deliver it drops silently."""

    async def append_messages(self, session_id: str, commit: MessageCommit) -> CommitResult:
        deliveries = commit.deliver_context_items
        if len(deliveries) > 1:
            queued = {r.key for r in await self.inner.list_undelivered_context_items(session_id)}
            kept = (deliveries[0], *(d for d in deliveries[1:] if d.key in queued))
            commit = commit.model_copy(update={"deliver_context_items": kept})
        return await self.inner.append_messages(session_id, commit)


class TruncateResolvesApprovals(Wrapper):
    """A truncate drops the pending approvals along with the rows."""

    async def truncate_messages(
        self, session_id: str, keep: int, *, fence_run_id: str | None = None
    ) -> None:
        await self.inner.truncate_messages(session_id, keep, fence_run_id=fence_run_id)
        for pending in await self.inner.list_pending_approvals(session_id):
            await self.inner.resolve_approval(session_id, pending.approval_id)


class _CommitLedger(Wrapper):
    """Answers retried commit ids from a ledger of its own, beside the inner store's."""

    def __init__(self, inner: SessionStateStore) -> None:
        super().__init__(inner)
        self.ledger: dict[tuple[str, str], CommitResult] = {}

    async def append_messages(self, session_id: str, commit: MessageCommit) -> CommitResult:
        key = (session_id, commit.commit_id or "")
        if commit.commit_id is not None and key in self.ledger:
            return self.ledger[key].model_copy(update={"replayed": True})
        result = await self.inner.append_messages(session_id, commit)
        if commit.commit_id is not None and not result.replayed:
            self.ledger[key] = result
        return result

    def forget(self, session_id: str, keep: int) -> None:
        for (sid, cid), result in list(self.ledger.items()):
            if sid == session_id and not self.survives(result, keep):
                del self.ledger[sid, cid]

    def survives(self, result: CommitResult, keep: int) -> bool:
        return result.message_count <= keep

    async def truncate_messages(
        self, session_id: str, keep: int, *, fence_run_id: str | None = None
    ) -> None:
        await self.inner.truncate_messages(session_id, keep, fence_run_id=fence_run_id)
        self.forget(session_id, keep)

    async def pop_messages(self, session_id: str, *args: Any, **kwargs: Any) -> list[Message]:
        popped = await self.inner.pop_messages(session_id, *args, **kwargs)
        self.forget(session_id, await self.inner.get_message_count(session_id))
        return popped

    async def clear_session(self, session_id: str) -> None:
        await self.inner.clear_session(session_id)
        self.forget(session_id, 0)


class ClearKeepsCommitIds(_CommitLedger):
    """Forgets commit ids on a cut, but not on ``clear_session``."""

    async def clear_session(self, session_id: str) -> None:
        await self.inner.clear_session(session_id)


class CutInsideKeepsCommitId(_CommitLedger):
    """Forgets a commit id only when a cut removes the commit's first row."""

    def survives(self, result: CommitResult, keep: int) -> bool:
        return result.first_index < keep


class CountCheckedBeforeFence(Wrapper):
    """Checks the expected count before the fence (the order of checks swapped)."""

    async def append_messages(self, session_id: str, commit: MessageCommit) -> CommitResult:
        expected = commit.expect_message_count
        if (
            expected is not None
            and commit.start_run is None
            and expected != await self.inner.get_message_count(session_id)
        ):
            raise MessageCountConflictError("stale count", session_id=session_id)
        return await self.inner.append_messages(session_id, commit)


class UnnamedMissingSession(Wrapper):
    """Says a session is missing without naming it, when listing checkpoints."""

    async def list_checkpoints(self, session_id: str) -> list[Checkpoint]:
        try:
            return await self.inner.list_checkpoints(session_id)
        except SessionNotFoundError:
            raise SessionNotFoundError("no such session") from None


class DropsProviderOptions(Wrapper):
    """Stores context items without their ``metadata`` and ``provider_options`` columns."""

    async def record_context_item(
        self, session_id: str, record: StoredContextItem, *, fence_run_id: str | None = None
    ) -> RecordResult:
        bare = record.item.model_copy(update={"metadata": None, "provider_options": None})
        return await self.inner.record_context_item(
            session_id, record.model_copy(update={"item": bare}), fence_run_id=fence_run_id
        )


# (broken store, the rule test that must catch it); grouped by the classes of bugs.
BROKEN: list[tuple[type[Wrapper], str]] = [
    (RepeatOverwrites, "test_CI_1_insert_once_per_key"),
    (CountCheckedAfterWrite, "test_EMC_1_stale_expected_count_refused"),
    (CountCheckedAfterWrite, "test_EMC_2_check_is_atomic_with_write"),
    (TruncateKeepsDeliveries, "test_CI_6_truncate_and_rewind_reopen"),
    (TruncateKeepsDeliveries, "test_LA_6_truncate_and_rewind_reopen"),
    (TruncateKeepsDeliveries, "test_MSG_4_truncate_bounds_and_effects"),
    (TruncateKeepsDeliveries, "test_MSG_7_pop_bounds_and_effects"),
    (TruncateKeepsDeliveries, "test_MSG_8_replace_order_of_checks_and_effects"),
    (FenceIgnoredOnRecord, "test_CI_3_fenced_record_needs_live_run"),
    (CloneCopiesItems, "test_CI_9_clone_copies_no_item"),
    (ResolvesEveryTime, "test_APR_2_resolved_exactly_once"),
    (PopByReadThenTruncate, "test_MSG_9_pop_is_atomic_beside_writers"),
    (ReplaceCheckedThenWritten, "test_MSG_10_replace_is_atomic_beside_writers"),
    (PopNewestFirst, "test_MSG_7_pop_bounds_and_effects"),
    # paging
    (DescCursorCountsFromNewest, "test_MSG_3_pages_are_exact_while_rows_are_appended"),
    (PagesCappedAtTen, "test_MSG_3_every_page_size_walks_exactly"),
    (ListingByUserPrefix, "test_SES_6_user_ids_that_prefix_each_other"),
    (TiesByCreationOrder, "test_SES_6_ties_by_id_and_cursors_across_ties"),
    # aliasing
    (HandsOutStoredObjects, "test_MSG_6_stored_rows_cannot_be_changed_by_callers"),
    (SharesCheckpointObjects, "test_MSG_6_no_read_or_write_shares_a_mutable_object"),
    # scale
    (ListsTenAtMost, "test_CI_5_a_dozen_items_many_delivered_by_one_commit"),
    # interplay
    (ChecksOnlyFirstDelivery, "test_CI_5_a_dozen_items_many_delivered_by_one_commit"),
    (TruncateResolvesApprovals, "test_APR_5_approvals_outlive_log_edits"),
    (ClearKeepsCommitIds, "test_IDEM_2_commit_ids_after_a_clear_and_a_cut_inside_a_commit"),
    (CutInsideKeepsCommitId, "test_IDEM_2_commit_ids_after_a_clear_and_a_cut_inside_a_commit"),
    (CountCheckedBeforeFence, "test_CMT_1_two_faults_at_once_the_first_check_wins"),
    # error flags
    (UnnamedMissingSession, "test_ERR_1_every_refusal_class_from_every_kind_of_call"),
    # round trip of every field
    (DropsProviderOptions, "test_INP_1_every_optional_field_reads_back"),
]


def _factory(wrap: type[Wrapper] | None) -> Any:
    data = MemoryData()

    def factory(**options: Any) -> Any:
        store = MemoryStateStore(data, **options)
        return store if wrap is None else wrap(store)

    return factory


async def _run(wrap: type[Wrapper] | None, test_name: str) -> None:
    _, func = rule_tests(SessionStoreContract)[test_name]
    factory = _factory(wrap)
    suite = SessionStoreContract()
    if "store" in inspect.signature(func).parameters:
        async with factory() as store:
            await func(suite, store)
    else:
        await func(suite, factory)


@pytest.mark.parametrize(
    ("wrap", "test_name"),
    BROKEN,
    ids=[f"{w.__name__}-{rule_tests(SessionStoreContract)[t][0]}" for w, t in BROKEN],
)
async def test_broken_store_fails_its_rule(wrap: type[Wrapper], test_name: str) -> None:
    await _run(None, test_name)  # the rule holds for the correct store
    # A broken rule shows as a failed assert, a pytest.raises that did not raise,
    # or a refusal of another class than the rule's.
    with pytest.raises((AssertionError, pytest.fail.Exception, StateStoreError)):
        await _run(wrap, test_name)


# Finding the bug is the point here, not the smallest example of it: no shrinking.
settings.register_profile(
    "helix-find", settings.get_profile("helix-thorough"), phases=[Phase.generate]
)


@pytest.mark.parametrize("wrap", [TruncateKeepsDeliveries, PopNewestFirst])
def test_state_machine_catches_a_broken_store(wrap: type[Wrapper]) -> None:
    with pytest.raises(Exception) as caught:  # noqa: PT011 - unpacked below
        run_state_machine(_factory(wrap), profile="helix-find")
    # Hypothesis reports each distinct failure it found (items and late answers).
    failures = getattr(caught.value, "exceptions", [caught.value])
    assert failures
    assert all(isinstance(f, AssertionError) for f in failures), failures
