"""Context items, late answers, approvals and checkpoints of :class:`RedisStateStore`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pydantic

from helix_agents.core import (
    Checkpoint,
    LateAnswer,
    PendingApproval,
    RecordResult,
    StoredContextItem,
)
from helix_agents.core.backend import (
    approvals_in_order,
    check_id,
    checkpoints_in_order,
    coerce,
    coerce_all,
    undelivered_in_order,
)
from helix_agents.core.models import ApprovalResolution

from ._base import StoreBase
from ._codec import dump_record, load_record
from ._errors import Refusal

__all__ = ["RecordsMixin", "fence_args"]

_M = TypeVar("_M", bound=pydantic.BaseModel)
_T = TypeVar("_T")
_Q = TypeVar("_Q", StoredContextItem, LateAnswer)
# The keys each read script is given.
_CTX = ("meta", "ctx", "ctxd")
_LATE = ("meta", "late", "lated")
_APPR = ("meta", "appr")
_CKPT = ("meta", "ckpt")


def fence_args(fence_run_id: str | None) -> list[str]:
    """A fence as two script arguments: whether there is one, and its run id."""
    return ["0", ""] if fence_run_id is None else ["1", fence_run_id]


class RecordsMixin(StoreBase):
    """Insert-once records hung on a session: queues, approvals, checkpoints."""

    async def _fenced(
        self, session_id: str, fence_run_id: str | None, check: Callable[[], _T]
    ) -> _T:
        """``check()``, then the fence's id, after the session id (as ``_checked``)."""

        def both() -> _T:
            checked = check()
            check_id(fence_run_id, "fence_run_id", session_id=session_id, optional=True)
            return checked

        return await self._checked(session_id, both)

    async def _insert(
        self,
        name: str,
        session_id: str,
        fence_run_id: str | None,
        args: list[Any],
        checkpoint: tuple[str, int] | None = None,
    ) -> RecordResult:
        reply = await self._run(
            name,
            session_id,
            [*self._common(session_id), *fence_args(fence_run_id), *args],
            write=True,
        )
        if reply[0] == "noop":
            return RecordResult(recorded=False)
        if reply[0] != "ok":
            Refusal.parse(reply).raise_error(
                session_id, fence_run_id=fence_run_id, checkpoint=checkpoint
            )
        await self._after(session_id, reply)
        return RecordResult(recorded=True)

    async def _queued(self, model: type[_M], session_id: str, keys: tuple[str, ...]) -> list[_M]:
        """The undelivered records of a queue (``lua/r_queue.lua``), in core's order."""
        self._open_session(session_id)
        reply = await self._run("r_queue", session_id, [], write=False, keys=keys)
        return undelivered_in_order((load_record(model, raw), None) for raw in reply[1])

    async def _enqueue(
        self, model: type[_Q], value: Any, session_id: str, fence_run_id: str | None
    ) -> RecordResult:
        """Queue a context item or a late answer, once per its key (``lua/record.lua``)."""
        record = await self._fenced(
            session_id, fence_run_id, lambda: coerce(model, value, session_id)
        )
        if isinstance(record, StoredContextItem):
            args = ["ctx", record.key, dump_record(record)]
        else:
            args = ["late", record.call_id, dump_record(record)]
        return await self._insert("record", session_id, fence_run_id, args)

    async def record_context_item(
        self, session_id: str, record: StoredContextItem, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Queue a context item, once per key."""
        return await self._enqueue(StoredContextItem, record, session_id, fence_run_id)

    async def list_undelivered_context_items(self, session_id: str) -> list[StoredContextItem]:
        """Queued items, by ``at`` then key."""
        return await self._queued(StoredContextItem, session_id, _CTX)

    async def record_late_answer(
        self, session_id: str, answer: LateAnswer, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Queue a late answer, once per call id."""
        return await self._enqueue(LateAnswer, answer, session_id, fence_run_id)

    async def list_undelivered_late_answers(self, session_id: str) -> list[LateAnswer]:
        """Queued late answers, by ``at`` then call id."""
        return await self._queued(LateAnswer, session_id, _LATE)

    async def add_pending_approvals(
        self,
        session_id: str,
        approvals: Sequence[PendingApproval],
        *,
        fence_run_id: str | None = None,
    ) -> None:
        """Add approvals, once per ``approval_id``; a resolved id is not added again."""
        checked = await self._fenced(
            session_id,
            fence_run_id,
            lambda: coerce_all(PendingApproval, approvals, session_id, "approvals"),
        )
        pairs = [v for a in checked for v in (a.approval_id, dump_record(a))]
        await self._insert("approve", session_id, fence_run_id, pairs)

    async def list_pending_approvals(self, session_id: str) -> list[PendingApproval]:
        """Unresolved approvals by ``requested_at``, then id."""
        self._open_session(session_id)
        reply = await self._run("r_hash", session_id, [], write=False, keys=_APPR)
        return approvals_in_order(load_record(PendingApproval, raw) for raw in reply[1])

    async def resolve_approval(self, session_id: str, approval_id: str) -> ApprovalResolution:
        """``"resolved"`` for exactly one caller, ``"already-resolved"`` for the rest."""
        await self._checked(
            session_id, lambda: check_id(approval_id, "approval_id", session_id=session_id)
        )
        reply = await self._run(
            "resolve", session_id, [*self._common(session_id), approval_id], write=True
        )
        if reply[0] == "already":
            return "already-resolved"
        if reply[0] != "ok":
            Refusal.parse(reply).raise_error(session_id, what=approval_id)
        await self._after(session_id, reply)
        return "resolved"

    async def save_checkpoint(
        self, session_id: str, checkpoint: Checkpoint, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Save a checkpoint, once per id; ``message_count`` at most the session's count."""
        cp = await self._fenced(
            session_id, fence_run_id, lambda: coerce(Checkpoint, checkpoint, session_id)
        )
        return await self._insert(
            "checkpoint",
            session_id,
            fence_run_id,
            [cp.checkpoint_id, cp.message_count, dump_record(cp)],
            checkpoint=(cp.checkpoint_id, cp.message_count),
        )

    async def get_checkpoint(self, session_id: str, checkpoint_id: str) -> Checkpoint | None:
        """The checkpoint, or ``None``."""
        await self._checked(
            session_id, lambda: check_id(checkpoint_id, "checkpoint_id", session_id=session_id)
        )
        reply = await self._run("r_hash", session_id, [checkpoint_id], write=False, keys=_CKPT)
        raw = reply[1][0] if reply[1] else None
        return None if raw is None else load_record(Checkpoint, raw)

    async def latest_checkpoint(self, session_id: str) -> Checkpoint | None:
        """The checkpoint with the highest ``message_count``, then the newest."""
        checkpoints = await self.list_checkpoints(session_id)
        return checkpoints[-1] if checkpoints else None

    async def list_checkpoints(self, session_id: str) -> list[Checkpoint]:
        """Checkpoints by ``message_count``, then ``created_at``, then id."""
        self._open_session(session_id)
        reply = await self._run("r_hash", session_id, [], write=False, keys=_CKPT)
        return checkpoints_in_order(load_record(Checkpoint, raw) for raw in reply[1])
