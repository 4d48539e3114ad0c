"""Stores with one subtle bug each — paging, aliasing, scale, interplay, error flags, fields.

Built like those of ``broken_stores``: a correct store wrapped through the public API.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

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
    SessionSummary,
    StoredContextItem,
)

from .broken_stores import Wrapper

# --- paging -------------------------------------------------------------------------------


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
