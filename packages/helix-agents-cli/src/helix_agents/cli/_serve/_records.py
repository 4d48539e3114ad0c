"""What a session holds besides rows, as its page lists it: context items and late answers
queued and delivered, approvals pending and resolved, every offloaded output
(docs/inspector.md, INS-15 … INS-18)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime

from helix_agents.core import LateAnswer, PendingApproval, SessionStateStore, StoredContextItem
from helix_agents.core import ValidationError as StoreValidationError
from helix_agents.core.context import ContextStore, OutputNotFoundError, OutputRef
from helix_agents.core.errors import StoreMisconfiguredError
from helix_agents.core.transfer import dump_session

__all__ = ["Records", "full_records", "pending_records"]


@dataclass
class Records:
    """A session's records beside its rows; ``full`` says whether delivered items,
    resolved approvals and every output are in (``dump_session``) or only what the
    protocol lists (pending, queued, outputs named by the shown rows)."""

    full: bool
    approvals: list[PendingApproval] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    items: list[tuple[StoredContextItem, int | None]] = field(default_factory=list)
    answers: list[tuple[LateAnswer, int | None]] = field(default_factory=list)
    outputs: list[OutputRef] = field(default_factory=list)
    reason: str | None = None  # why the lists are not full, when the store cannot dump

    @property
    def queued_items(self) -> int:
        return sum(1 for _, row in self.items if row is None)

    @property
    def queued_answers(self) -> int:
        return sum(1 for _, row in self.answers if row is None)


def _order(row: int | None, at: datetime, key: str) -> tuple[int, int, datetime, str]:
    """Delivered ones in the order their rows landed, then the queued ones by time."""
    return (0, row, at, key) if row is not None else (1, 0, at, key)


async def pending_records(
    store: SessionStateStore, sid: str, named: list[str], reason: str | None = None
) -> Records:
    """What the protocol lists: pending approvals, queued items, and the outputs whose ids
    the shown rows ``named`` (an id no longer stored is left out)."""
    approvals, items, answers = await asyncio.gather(
        store.list_pending_approvals(sid),
        store.list_undelivered_context_items(sid),
        store.list_undelivered_late_answers(sid),
    )
    outputs: list[OutputRef] = []
    if isinstance(store, ContextStore):
        for oid in named:
            try:
                outputs.append(await store.get_output(sid, oid))
            except OutputNotFoundError:
                continue  # a row naming an output that is gone (or an id it never was)
    return Records(
        full=False,
        approvals=list(approvals),
        items=[(i, None) for i in items],
        answers=[(a, None) for a in answers],
        outputs=outputs,
        reason=reason,
    )


async def full_records(store: SessionStateStore, sid: str, named: list[str]) -> Records | None:
    """Every record, read at one version by ``dump_session`` (DMP-1); what the protocol
    lists, with the reason, for a store that cannot dump; ``None`` if the session is gone."""
    try:
        dump = await dump_session(store, sid)
    except (StoreMisconfiguredError, StoreValidationError):
        # no engine (not built on StoreBase), or one without dump; the id was checked
        reason = "this store cannot read its delivered items, resolved approvals and outputs"
        return await pending_records(store, sid, named, reason)
    if dump is None:
        return None
    return Records(
        full=True,
        approvals=list(dump.snapshot.pending),
        resolved=sorted(dump.resolved),
        items=sorted(dump.context_items, key=lambda e: _order(e[1], e[0].at, e[0].key)),
        answers=sorted(dump.late_answers, key=lambda e: _order(e[1], e[0].at, e[0].call_id)),
        outputs=sorted((ref for ref, _ in dump.outputs), key=lambda r: (r.created_at, r.output_id)),
    )
