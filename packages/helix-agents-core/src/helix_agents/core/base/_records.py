"""Queues, approvals and checkpoints, once for every engine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from ..checkpoint_pages import check_checkpoint_ids, checkpoint_range
from ..errors import approval_not_found
from ..inputs import check_id
from ..models import (
    ApprovalResolution,
    Checkpoint,
    LateAnswer,
    PendingApproval,
    RecordResult,
    StoredContextItem,
)
from ..rules import (
    approvals_in_order,
    assert_fence,
    check_checkpoint_count,
    checkpoints_in_order,
    coerce,
    coerce_all,
    undelivered_in_order,
)
from ..seam import Changes, Queue, Snapshot, Want
from ._plumbing import Plumbing

__all__ = ["RecordMethods"]

Queued = TypeVar("Queued", StoredContextItem, LateAnswer)
_RECORDED = RecordResult(recorded=True)
_KNOWN = RecordResult(recorded=False)


class RecordMethods(Plumbing):
    """The two queues, pending approvals and checkpoints."""

    async def record_context_item(
        self, session_id: str, record: StoredContextItem, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Queue a context item, once per key."""
        item = await self._checked(
            session_id, lambda: coerce(StoredContextItem, record, session_id)
        )
        return await self._enqueue(session_id, "context", item.key, item, fence_run_id)

    async def record_late_answer(
        self, session_id: str, answer: LateAnswer, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Queue a late answer, once per call id."""
        late = await self._checked(session_id, lambda: coerce(LateAnswer, answer, session_id))
        return await self._enqueue(session_id, "late", late.call_id, late, fence_run_id)

    async def _enqueue(
        self,
        session_id: str,
        queue: Queue,
        key: str,
        record: StoredContextItem | LateAnswer,
        fence_run_id: str | None,
    ) -> RecordResult:
        def plan(snap: Snapshot) -> tuple[Changes | None, RecordResult]:
            assert_fence(session_id, fence_run_id, snap.current_run)
            if key in snap.queue_state.get(queue, {}):
                return None, _KNOWN
            return Changes(activity=self._activity(snap), enqueue=record), _RECORDED

        return await self._write(session_id, Want(queue_keys={queue: [key]}), plan)

    async def list_undelivered_context_items(self, session_id: str) -> list[StoredContextItem]:
        """Queued items, by ``at`` then key."""
        return await self._undelivered(session_id, "context", StoredContextItem)

    async def list_undelivered_late_answers(self, session_id: str) -> list[LateAnswer]:
        """Queued late answers, by ``at`` then call id."""
        return await self._undelivered(session_id, "late", LateAnswer)

    async def _undelivered(self, session_id: str, queue: Queue, kind: type[Queued]) -> list[Queued]:
        snap = await self._snapshot(session_id, Want(queued=queue))
        return undelivered_in_order((r, None) for r in snap.queued if isinstance(r, kind))

    async def add_pending_approvals(
        self,
        session_id: str,
        approvals: Sequence[PendingApproval],
        *,
        fence_run_id: str | None = None,
    ) -> None:
        """Add approvals, once per ``approval_id``."""
        checked = await self._checked(
            session_id, lambda: coerce_all(PendingApproval, approvals, session_id, "approvals")
        )

        def plan(snap: Snapshot) -> tuple[Changes | None, None]:
            assert_fence(session_id, fence_run_id, snap.current_run)
            fresh: dict[str, PendingApproval] = {}
            for approval in checked:
                if approval.approval_id not in snap.approval_state:
                    fresh.setdefault(approval.approval_id, approval)
            if not fresh:
                return None, None
            return Changes(activity=self._activity(snap), approvals=tuple(fresh.values())), None

        want = Want(approval_ids=[a.approval_id for a in checked])
        await self._write(session_id, want, plan)

    async def list_pending_approvals(self, session_id: str) -> list[PendingApproval]:
        """Unresolved approvals by ``requested_at``, then id."""
        snap = await self._snapshot(session_id, Want(pending=True))
        return approvals_in_order(snap.pending)

    async def resolve_approval(self, session_id: str, approval_id: str) -> ApprovalResolution:
        """``"resolved"`` for exactly one caller, ``"already-resolved"`` for the rest."""
        await self._checked(
            session_id, lambda: check_id(approval_id, "approval_id", session_id=session_id)
        )

        def plan(snap: Snapshot) -> tuple[Changes | None, ApprovalResolution]:
            state = snap.approval_state.get(approval_id)
            if state == "resolved":
                return None, "already-resolved"
            if state is None:
                raise approval_not_found(session_id, approval_id)
            return Changes(activity=self._activity(snap), resolve=approval_id), "resolved"

        return await self._write(session_id, Want(approval_ids=[approval_id]), plan)

    async def save_checkpoint(
        self, session_id: str, checkpoint: Checkpoint, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Save a checkpoint, once per id."""
        saved = await self._checked(session_id, lambda: coerce(Checkpoint, checkpoint, session_id))
        cid = saved.checkpoint_id

        def plan(snap: Snapshot) -> tuple[Changes | None, RecordResult]:
            check_checkpoint_count(session_id, cid, saved.message_count, snap.message_count)
            assert_fence(session_id, fence_run_id, snap.current_run)
            if cid in snap.named_checkpoints:
                return None, _KNOWN
            drop = self._expiry.dropped(snap.checkpoints, saved, self._clock()) if keep else []
            changes = Changes(
                activity=self._activity(snap), checkpoint=saved, delete_checkpoints=drop
            )
            return changes, _RECORDED

        # Retention (TTL-7) reads the others to drop them in the same write.
        keep = self._expiry.retains_checkpoints
        want = Want(checkpoint_ids=[cid], checkpoints="all" if keep else None)
        return await self._write(session_id, want, plan)

    async def get_checkpoint(self, session_id: str, checkpoint_id: str) -> Checkpoint | None:
        """The checkpoint, or ``None``."""
        cid = await self._checked(
            session_id, lambda: check_id(checkpoint_id, "checkpoint_id", session_id=session_id)
        )
        snap = await self._snapshot(session_id, Want(checkpoint_ids=[cid]))
        return snap.named_checkpoints.get(cid)

    async def latest_checkpoint(self, session_id: str) -> Checkpoint | None:
        """The checkpoint with the highest ``message_count``, then the newest."""
        checkpoints = await self.list_checkpoints(session_id)
        return checkpoints[-1] if checkpoints else None

    async def list_checkpoints(self, session_id: str) -> list[Checkpoint]:
        """Checkpoints by ``message_count``, then ``created_at``, then id."""
        snap = await self._snapshot(session_id, Want(checkpoints="all"))
        return checkpoints_in_order(snap.checkpoints)

    async def page_checkpoints(
        self,
        session_id: str,
        *,
        prefix: str = "",
        before: str | None = None,
        limit: int = 50,
    ) -> list[Checkpoint]:
        """Up to ``limit`` checkpoints under ``prefix`` and below ``before``, greatest id first."""
        where = await self._checked(
            session_id, lambda: checkpoint_range(session_id, prefix, before, limit)
        )
        if where.empty:
            await self._snapshot(session_id)
            return []
        return list((await self._snapshot(session_id, Want(checkpoints=where))).checkpoints)

    async def delete_checkpoints(self, session_id: str, checkpoint_ids: Sequence[str]) -> int:
        """Delete the named checkpoints (unknown ids are skipped); how many were deleted."""
        ids = await self._checked(
            session_id, lambda: check_checkpoint_ids(session_id, checkpoint_ids)
        )

        def plan(snap: Snapshot) -> tuple[Changes | None, int]:
            gone = [cid for cid in ids if cid in snap.named_checkpoints]
            if not gone:
                return None, 0
            return Changes(activity=self._activity(snap), delete_checkpoints=gone), len(gone)

        return await self._write(session_id, Want(checkpoint_ids=ids), plan)
