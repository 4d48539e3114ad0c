"""Context items, late answers, approvals and checkpoints of the Postgres store."""

from __future__ import annotations

from collections.abc import Sequence
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
    check_checkpoint_count,
    check_id,
    coerce,
    coerce_all,
)
from helix_agents.core.errors import approval_not_found
from helix_agents.core.models import ApprovalResolution

from . import _json
from ._base import StoreBase, big
from ._refusals import Snapshot, refuse, refuse_fenced

__all__ = ["QueuesMixin"]

_M = TypeVar("_M", bound=pydantic.BaseModel)
_Q = TypeVar("_Q", StoredContextItem, LateAnswer)
_T = TypeVar("_T")


def _body(model: pydantic.BaseModel) -> str:
    return _json.dumps(model.model_dump(mode="json", by_alias=True, exclude_unset=True))


def _fenced(checked: _T, fence_run_id: str | None, session_id: str) -> _T:
    # A fence the server cannot even be sent is refused with the input it came with.
    check_id(fence_run_id, "fence_run_id", session_id=session_id, optional=True)
    return checked


def _load(model: type[_M], rows: list[tuple[Any, ...]]) -> list[_M]:
    return [model.model_validate(_json.loads(body)) for (body,) in rows if body is not None]


class QueuesMixin(StoreBase):
    """The queues, approvals and checkpoints; each write is one server-side call."""

    async def _record(
        self,
        session_id: str,
        model: type[_Q],
        record: _Q,
        fence_run_id: str | None,
        what: str,
    ) -> RecordResult:
        """Queue a context item or a late answer (``model``), once per key."""
        checked = await self._checked(
            session_id,
            what,
            lambda: _fenced(coerce(model, record, session_id), fence_run_id, session_id),
        )
        late = isinstance(checked, LateAnswer)
        key = checked.call_id if isinstance(checked, LateAnswer) else checked.key
        doc = await self._call(
            self._sql.record,
            (session_id, late, key, checked.at, _body(checked), fence_run_id, self._clock()),
            what=what,
            session_id=session_id,
        )
        refuse_fenced(session_id, doc, fence_run_id)
        return RecordResult(recorded=doc["recorded"])

    async def _listed(self, query: bytes, model: type[_M], session_id: str, what: str) -> list[_M]:
        """The bodies a read of the session's ``query`` returns, as ``model``."""
        self._open_session(what, session_id)
        return _load(model, await self._session_rows(query, (session_id,), session_id, what))

    async def record_context_item(
        self, session_id: str, record: StoredContextItem, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Queue a context item, once per key."""
        return await self._record(
            session_id, StoredContextItem, record, fence_run_id, "record_context_item"
        )

    async def list_undelivered_context_items(self, session_id: str) -> list[StoredContextItem]:
        """Queued items, by ``at`` then key."""
        return await self._listed(
            self._sql.context_items, StoredContextItem, session_id, "list_undelivered_context_items"
        )

    async def record_late_answer(
        self, session_id: str, answer: LateAnswer, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Queue a late answer, once per call id."""
        return await self._record(
            session_id, LateAnswer, answer, fence_run_id, "record_late_answer"
        )

    async def list_undelivered_late_answers(self, session_id: str) -> list[LateAnswer]:
        """Queued late answers, by ``at`` then call id."""
        return await self._listed(
            self._sql.late_answers, LateAnswer, session_id, "list_undelivered_late_answers"
        )

    # Approvals

    async def add_pending_approvals(
        self,
        session_id: str,
        approvals: Sequence[PendingApproval],
        *,
        fence_run_id: str | None = None,
    ) -> None:
        """Add approvals, once per ``approval_id``; a resolved id is not added again."""
        checked = await self._checked(
            session_id,
            "add_pending_approvals",
            lambda: _fenced(
                coerce_all(PendingApproval, approvals, session_id, "approvals"),
                fence_run_id,
                session_id,
            ),
        )
        doc = await self._call(
            self._sql.add_approvals,
            (
                session_id,
                [a.approval_id for a in checked],
                [a.requested_at for a in checked],
                [_body(a) for a in checked],
                fence_run_id,
                self._clock(),
            ),
            what="add_pending_approvals",
            session_id=session_id,
        )
        refuse_fenced(session_id, doc, fence_run_id)

    async def list_pending_approvals(self, session_id: str) -> list[PendingApproval]:
        """Unresolved approvals by ``requested_at``, then id."""
        return await self._listed(
            self._sql.approvals, PendingApproval, session_id, "list_pending_approvals"
        )

    async def resolve_approval(self, session_id: str, approval_id: str) -> ApprovalResolution:
        """``"resolved"`` for exactly one caller, ``"already-resolved"`` for the rest."""
        await self._checked(
            session_id,
            "resolve_approval",
            lambda: check_id(approval_id, "approval_id", session_id=session_id),
        )
        doc = await self._call(
            self._sql.resolve_approval,
            (session_id, approval_id, self._clock()),
            what="resolve_approval",
            session_id=session_id,
        )
        if "refused" in doc:

            def missing(_: Snapshot) -> None:
                raise approval_not_found(session_id, approval_id)

            refuse(session_id, doc, missing)
        resolution: ApprovalResolution = (
            "resolved" if doc["resolution"] == "resolved" else "already-resolved"
        )
        return resolution

    # Checkpoints

    async def save_checkpoint(
        self, session_id: str, checkpoint: Checkpoint, *, fence_run_id: str | None = None
    ) -> RecordResult:
        """Save a checkpoint, once per id; its ``message_count`` is at most the session's."""
        cp = await self._checked(
            session_id,
            "save_checkpoint",
            lambda: _fenced(coerce(Checkpoint, checkpoint, session_id), fence_run_id, session_id),
        )
        doc = await self._call(
            self._sql.save_checkpoint,
            (
                session_id,
                cp.checkpoint_id,
                big(cp.message_count),
                cp.created_at,
                _body(cp),
                fence_run_id,
                self._clock(),
            ),
            what="save_checkpoint",
            session_id=session_id,
        )
        refuse_fenced(
            session_id,
            doc,
            fence_run_id,
            lambda snap: check_checkpoint_count(
                session_id, cp.checkpoint_id, cp.message_count, snap.message_count
            ),
        )
        return RecordResult(recorded=doc["recorded"])

    async def get_checkpoint(self, session_id: str, checkpoint_id: str) -> Checkpoint | None:
        """The checkpoint, or ``None``."""
        await self._checked(
            session_id,
            "get_checkpoint",
            lambda: check_id(checkpoint_id, "checkpoint_id", session_id=session_id),
        )
        rows = await self._session_rows(
            self._sql.checkpoint, (checkpoint_id, session_id), session_id, "get_checkpoint"
        )
        found = _load(Checkpoint, rows)
        return found[0] if found else None

    async def latest_checkpoint(self, session_id: str) -> Checkpoint | None:
        """The checkpoint with the highest ``message_count``, then the newest."""
        found = await self._listed(
            self._sql.latest_checkpoint, Checkpoint, session_id, "latest_checkpoint"
        )
        return found[0] if found else None

    async def list_checkpoints(self, session_id: str) -> list[Checkpoint]:
        """Checkpoints by ``message_count``, then ``created_at``, then id."""
        return await self._listed(self._sql.checkpoints, Checkpoint, session_id, "list_checkpoints")
