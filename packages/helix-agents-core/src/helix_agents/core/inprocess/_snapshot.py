"""Reads of an in-process engine: a snapshot, a clone's copy, a listing summary."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ..dumps import DUMP_WANT, SessionDump
from ..messages import JsonObject
from ..models import Checkpoint, LateAnswer, ListedSession, SessionSummary, StoredContextItem
from ..seam import Queue, Snapshot, Want
from . import _checkpoints
from ._records import SessionRecords

__all__ = ["copy_prefix", "dump_of", "listed_of", "scoped_maps_of", "snapshot_of", "summary_of"]


def _queue(
    s: SessionRecords, name: Queue
) -> Mapping[str, tuple[StoredContextItem | LateAnswer, int | None]]:
    """The queue ``name`` of ``s``: its records by key, with the row that delivered each."""
    if name == "context":
        return s.items
    if name == "late":
        return s.late
    raise ValueError(f"no queue {name!r}")


def snapshot_of(s: SessionRecords, want: Want) -> Snapshot:
    """The head of ``s`` and what ``want`` names, as copies (rows are never changed in
    place, so they are shared)."""
    ctx = s.context
    first, count = s.first_index, s.message_count
    start = ctx.compactions[-1][0] if ctx.compactions else 0
    rows_from, hi = first, first
    if want.window:
        rows_from, hi = max(start, first), count
    elif want.rows is not None:
        rows_from, hi = want.rows.clip(first, count)
    checkpoints: Sequence[Checkpoint] = ()
    if want.checkpoints == "all":
        checkpoints = [cp.model_copy(deep=True) for cp in s.checkpoints.values()]
    elif want.checkpoints is not None:
        checkpoints = _checkpoints.page(s, want.checkpoints)
    output = None
    if want.output_id is not None and want.output_id in ctx.outputs:
        ref, text = ctx.outputs[want.output_id]
        output = (ref, text if want.output_text else "")
    keyed = None
    if want.output_key is not None and want.output_key in ctx.keys:
        keyed = ctx.outputs[ctx.keys[want.output_key]][0]
    queued: Sequence[StoredContextItem | LateAnswer] = ()
    if want.queued is not None:
        queued = [r.model_copy(deep=True) for r, i in _queue(s, want.queued).values() if i is None]
    return Snapshot(
        session_id=s.id,
        version=s.version,
        user_id=s.user_id,
        created_at=s.created_at,
        last_activity_at=s.last_activity_at,
        metadata=s.metadata,  # validation copies it, nested containers too
        message_count=count,
        first_index=first,
        ui_count=s.ui_count,
        current_run=s.current_run,
        window_start=start,
        compactions=len(ctx.compactions),
        preserved=ctx.preserved,
        replay=None if want.commit_id is None else s.commits.get(want.commit_id),
        run_id_used=want.run_id is not None and want.run_id in s.run_ids,
        queue_state={
            name: {k: table[k][1] for k in keys if k in table}
            for name, keys in want.queue_keys.items()
            for table in [_queue(s, name)]
        },
        approval_state={
            aid: "pending" if aid in s.approvals else "resolved"
            for aid in want.approval_ids
            if aid in s.approvals or aid in s.resolved
        },
        named_checkpoints={
            cid: s.checkpoints[cid].model_copy(deep=True)
            for cid in want.checkpoint_ids
            if cid in s.checkpoints
        },
        keyed_output=keyed,
        output=output,
        rows_from=rows_from,
        rows=s.rows[rows_from - first : hi - first],
        queued=queued,
        pending=[a.model_copy(deep=True) for a in s.approvals.values()] if want.pending else (),
        checkpoints=checkpoints,
        summary=ctx.compactions[-1][1] if want.window and ctx.compactions else None,
        archive=list(ctx.archive) if want.archive else (),
        session_scoped=copy.deepcopy(s.scoped) if want.session_scoped else {},
    )


def dump_of(s: SessionRecords) -> SessionDump:
    """Every record of ``s`` (docs/export.md, EXP-2), as copies."""
    ctx = s.context
    return SessionDump(
        snapshot=snapshot_of(s, DUMP_WANT),
        run_ids=sorted(s.run_ids),
        context_items=[(r.model_copy(deep=True), i) for r, i in s.items.values()],
        late_answers=[(r.model_copy(deep=True), i) for r, i in s.late.values()],
        resolved=sorted(s.resolved),
        commits=sorted(s.commits.items()),
        outputs=list(ctx.outputs.values()),
        compactions=list(ctx.compactions),
    )


def scoped_maps_of(
    maps: Mapping[tuple[str, str], Mapping[str, Any]],
) -> list[tuple[str, str, JsonObject]]:
    """Every app and user map that holds a key, by scope and owner, as copies (EXP-3)."""
    return [
        (scope, owner, copy.deepcopy(dict(values)))
        for (scope, owner), values in sorted(maps.items())
        if values
    ]


def copy_prefix(source: SessionRecords, clone: SessionRecords, end: int) -> None:
    """Give ``clone`` the rows of ``source`` below ``end`` and the checkpoints in range;
    nothing else of a session is cloned (CI-9, LA-9)."""
    cut = end - source.first_index
    clone.rows = [dict(row) for row in source.rows[:cut]]
    clone.context_flags = source.context_flags[:cut]
    clone.first_index = source.first_index
    clone.ui_count = source.ui_count - sum(not flag for flag in source.context_flags[cut:])
    clone.checkpoints = {
        cid: cp.model_copy(deep=True)
        for cid, cp in source.checkpoints.items()
        if cp.message_count <= end
    }


def summary_of(s: SessionRecords) -> SessionSummary:
    """The listing's line for ``s``."""
    return SessionSummary(
        id=s.id,
        created_at=s.created_at,
        last_activity_at=s.last_activity_at,
        message_count=s.message_count,
        pending_approvals=len(s.approvals),
    )


def listed_of(s: SessionRecords) -> ListedSession:
    """The store-wide listing's line for ``s``."""
    return ListedSession(
        id=s.id,
        user_id=s.user_id,
        created_at=s.created_at,
        last_activity_at=s.last_activity_at,
        message_count=s.message_count,
        pending_approvals=len(s.approvals),
        metadata=s.metadata,  # validation copies it, nested containers too
    )
