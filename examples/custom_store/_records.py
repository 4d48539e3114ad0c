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
    approval_not_found,
    assert_fence,
    check_checkpoint_count,
    check_checkpoint_ids,
    check_id,
    checkpoint_range,
    coerce,
    coerce_all,
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
            if record.key in doc.items:
                return RecordResult(recorded=False)
            doc.items[record.key] = (record, None)
            self._touch(doc)
            return RecordResult(recorded=True)

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
            if answer.call_id in doc.late:
                return RecordResult(recorded=False)
            doc.late[answer.call_id] = (answer, None)
            self._touch(doc)
            return RecordResult(recorded=True)

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
            new = [
                a
                for a in checked
                if a.approval_id not in doc.approvals and a.approval_id not in doc.resolved
            ]
            for approval in new:
                doc.approvals.setdefault(approval.approval_id, approval)
            if new:
                self._touch(doc)

    async def list_pending_approvals(self, session_id: str) -> list[PendingApproval]:
        """Unresolved approvals by ``requested_at``, then id."""
        approvals = self._load(session_id).approvals.values()
        return sorted(approvals, key=lambda a: (a.requested_at, a.approval_id))

    async def resolve_approval(self, session_id: str, approval_id: str) -> ApprovalResolution:
        """``"resolved"`` for exactly one caller, ``"already-resolved"`` for the rest."""
        with self._write(session_id) as doc:
            check_id(approval_id, "approval_id", session_id=session_id)
            if approval_id in doc.resolved:
                return "already-resolved"
            if doc.approvals.pop(approval_id, None) is None:
                raise approval_not_found(session_id, approval_id)
            doc.resolved.append(approval_id)
            self._touch(doc)
            return "resolved"

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
            if checkpoint.checkpoint_id in doc.checkpoints:
                return RecordResult(recorded=False)
            doc.checkpoints[checkpoint.checkpoint_id] = checkpoint
            self._touch(doc)
            return RecordResult(recorded=True)

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
        return sorted(
            self._load(session_id).checkpoints.values(),
            key=lambda c: (c.message_count, c.created_at, c.checkpoint_id),
        )

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
