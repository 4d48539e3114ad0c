"""Queues, approvals and checkpoints of :class:`~.store.JsonDocumentStore`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

from helix_agents.core import (
    ApprovalResolution,
    Checkpoint,
    LateAnswer,
    PendingApproval,
    RecordResult,
    StoredContextItem,
)
from helix_agents.core.backend import (
    add_approvals_once,
    approvals_in_order,
    assert_fence,
    check_checkpoint_count,
    check_checkpoint_ids,
    check_id,
    checkpoint_range,
    checkpoints_in_order,
    coerce,
    coerce_all,
    record_once,
    resolve_once,
    undelivered_in_order,
)

from ._document import SessionDoc

__all__ = ["RecordMethods"]


class RecordMethods:
    """The protocol's methods on records kept beside the rows, written like the store's."""

    _load: Callable[[str], SessionDoc]
    _write: Callable[[str], AbstractContextManager[SessionDoc]]
    _touch: Callable[[SessionDoc], None]

    # Queues

    async def record_context_item(
        self, session_id: str, record: StoredContextItem, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Queue a context item, once per key."""
        with self._write(session_id) as doc:
            record = coerce(StoredContextItem, record, session_id)
            assert_fence(session_id, fence_run_id, doc.current_run)
            result = record_once(doc.items, record.key, (record, None))
            if result.recorded:
                self._touch(doc)
            return result

    async def list_undelivered_context_items(self, session_id: str) -> list[StoredContextItem]:
        """Queued items, by ``at`` then key."""
        return undelivered_in_order(self._load(session_id).items.values())

    async def record_late_answer(
        self, session_id: str, answer: LateAnswer, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Queue a late answer, once per call id."""
        with self._write(session_id) as doc:
            answer = coerce(LateAnswer, answer, session_id)
            assert_fence(session_id, fence_run_id, doc.current_run)
            result = record_once(doc.late, answer.call_id, (answer, None))
            if result.recorded:
                self._touch(doc)
            return result

    async def list_undelivered_late_answers(self, session_id: str) -> list[LateAnswer]:
        """Queued late answers, by ``at`` then call id."""
        return undelivered_in_order(self._load(session_id).late.values())

    # Approvals

    async def add_pending_approvals(
        self,
        session_id: str,
        approvals: Sequence[PendingApproval],
        *,
        fence_run_id: str | None = None,
    ) -> None:
        """Add approvals, once per ``approval_id``."""
        with self._write(session_id) as doc:
            checked = coerce_all(PendingApproval, approvals, session_id, "approvals")
            assert_fence(session_id, fence_run_id, doc.current_run)
            if add_approvals_once(doc.approvals, doc.resolved, checked):
                self._touch(doc)

    async def list_pending_approvals(self, session_id: str) -> list[PendingApproval]:
        """Unresolved approvals by ``requested_at``, then id."""
        return approvals_in_order(self._load(session_id).approvals.values())

    async def resolve_approval(self, session_id: str, approval_id: str) -> ApprovalResolution:
        """``"resolved"`` for exactly one caller, ``"already-resolved"`` for the rest."""
        with self._write(session_id) as doc:
            check_id(approval_id, "approval_id", session_id=session_id)
            resolution = resolve_once(session_id, approval_id, doc.approvals, doc.resolved)
            if resolution == "resolved":
                self._touch(doc)
            return resolution

    # Checkpoints

    async def save_checkpoint(
        self, session_id: str, checkpoint: Checkpoint, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Save a checkpoint, once per id."""
        with self._write(session_id) as doc:
            checkpoint = coerce(Checkpoint, checkpoint, session_id)
            check_checkpoint_count(
                session_id, checkpoint.checkpoint_id, checkpoint.message_count, doc.message_count
            )
            assert_fence(session_id, fence_run_id, doc.current_run)
            result = record_once(doc.checkpoints, checkpoint.checkpoint_id, checkpoint)
            if result.recorded:
                self._touch(doc)
            return result

    async def get_checkpoint(self, session_id: str, checkpoint_id: str) -> Checkpoint | None:
        """The checkpoint, or ``None``."""
        doc = self._load(session_id)
        check_id(checkpoint_id, "checkpoint_id", session_id=session_id)
        return doc.checkpoints.get(checkpoint_id)

    async def latest_checkpoint(self, session_id: str) -> Checkpoint | None:
        """The checkpoint with the highest ``message_count``, then the newest."""
        checkpoints = await self.list_checkpoints(session_id)
        return checkpoints[-1] if checkpoints else None

    async def list_checkpoints(self, session_id: str) -> list[Checkpoint]:
        """Checkpoints by ``message_count``, then ``created_at``, then id."""
        return checkpoints_in_order(self._load(session_id).checkpoints.values())

    async def page_checkpoints(
        self,
        session_id: str,
        *,
        prefix: str = "",
        before: str | None = None,
        limit: int = 50,
    ) -> list[Checkpoint]:
        """Up to ``limit`` checkpoints under ``prefix`` and below ``before``, greatest id first."""
        doc = self._load(session_id)
        where = checkpoint_range(session_id, prefix, before, limit)
        ids = sorted(cid for cid in doc.checkpoints if cid in where)
        return [doc.checkpoints[cid] for cid in reversed(ids[-where.limit :])]

    async def delete_checkpoints(self, session_id: str, checkpoint_ids: Sequence[str]) -> int:
        """Delete the named checkpoints (unknown ids are skipped); how many were deleted."""
        with self._write(session_id) as doc:
            ids = check_checkpoint_ids(session_id, checkpoint_ids)
            gone = sum(doc.checkpoints.pop(cid, None) is not None for cid in ids)
            if gone:
                self._touch(doc)
            return gone
