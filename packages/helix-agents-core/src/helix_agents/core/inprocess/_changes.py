"""A :class:`~helix_agents.core.backend.Changes` plan applied to one session's data,
under its lock (the meaning of each field: docs/backends/writing.md)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from typing import Any

from ..messages import dump_message
from ..models import Checkpoint, CommitResult, LateAnswer
from ..rules import commit_survives, reopen_on_truncate
from ..seam import Changes
from ._records import ContextRecords, SessionRecords

__all__ = ["apply_changes"]

SharedMerge = Callable[[tuple[str, str], Mapping[str, Any]], None]
"""Merges keys into an app or user map of scoped state, atomically with the write."""


def apply_changes(s: SessionRecords, changes: Changes, merge_shared: SharedMerge) -> None:
    """Apply every field of ``changes`` in order and bump the version."""
    if changes.clear:
        _clear(s)
    if changes.cut_to is not None:
        _cut(s, changes.cut_to)
    if changes.run is not None:
        s.current_run = changes.run
        s.run_ids.add(changes.run.run_id)
    for row in changes.rows:
        s.rows.append(dump_message(row))
        is_context = row.role == "context"
        s.context_flags.append(is_context)
        s.ui_count += not is_context
    for queue, key, index in changes.deliveries:
        if queue == "context":
            s.items[key] = (s.items[key][0], index)
        else:
            s.late[key] = (s.late[key][0], index)
    if changes.enqueue is not None:
        record = changes.enqueue.model_copy(deep=True)
        if isinstance(record, LateAnswer):
            s.late[record.call_id] = (record, None)
        else:
            s.items[record.key] = (record, None)
    for (scope, owner), values in changes.scoped.items():
        fresh = copy.deepcopy(dict(values))
        if scope == "session":
            s.scoped.update(fresh)
            continue
        merge_shared((scope, owner), fresh)
    if changes.commit is not None:
        s.commits[changes.commit[0]] = changes.commit[1]
    if changes.drop_below is not None:
        _retain(s, changes.drop_below, changes.archive)
    s.context.archive.extend((index, dump_message(row)) for index, row in changes.archived)
    for approval in changes.approvals:
        s.approvals[approval.approval_id] = approval.model_copy(deep=True)
    if changes.resolve is not None:
        s.approvals.pop(changes.resolve, None)
        s.resolved.add(changes.resolve)
    if changes.checkpoint is not None:
        s.checkpoints[changes.checkpoint.checkpoint_id] = changes.checkpoint.model_copy(deep=True)
    for cid in changes.delete_checkpoints:
        s.checkpoints.pop(cid, None)
    if changes.output is not None:
        ref, text = changes.output
        s.context.outputs[ref.output_id] = (ref, text)
        if ref.key is not None:
            s.context.keys[ref.key] = ref.output_id
    if changes.compaction is not None:
        s.context.compactions.append(changes.compaction)
    if changes.preserve:
        s.context.preserved = True
    if changes.metadata is not None:
        s.metadata = copy.deepcopy(changes.metadata)
    if changes.redact is not None:
        index, row = changes.redact
        s.rows[index - s.first_index] = dump_message(row)
    s.last_activity_at = changes.activity
    s.version += 1


def _clear(s: SessionRecords) -> None:
    s.rows.clear()
    s.context_flags.clear()
    s.first_index = s.ui_count = 0
    for table in (s.items, s.late, s.approvals, s.checkpoints, s.commits):
        table.clear()
    s.context = ContextRecords()
    s.scoped.clear()
    s.resolved.clear()


def _cut(s: SessionRecords, keep: int) -> None:
    """Drop rows at index >= ``keep`` and what hung on them (MSG-4, CI-6, IDEM-2, CS-11)."""
    cut = keep - s.first_index
    s.ui_count -= sum(not flag for flag in s.context_flags[cut:])
    del s.rows[cut:]
    del s.context_flags[cut:]
    _cut_records(keep, (s.items, s.late), s.checkpoints, s.commits, s.context.compactions)


def _retain(s: SessionRecords, drop_below: int, archive: bool) -> None:
    """Drop rows below ``drop_below``, archived once history is preserved (MSG-5, CS-9)."""
    drop = drop_below - s.first_index
    if archive:
        first = s.first_index
        s.context.archive.extend((first + i, s.rows[i]) for i in range(drop))
    del s.rows[:drop]
    del s.context_flags[:drop]
    s.first_index = drop_below


def _cut_records(
    keep: int,
    queues: Iterable[MutableMapping[str, tuple[Any, int | None]]],
    checkpoints: MutableMapping[str, Checkpoint],
    commits: MutableMapping[str, CommitResult],
    compactions: list[tuple[int, Any]],
) -> None:
    """Undo what rows at index >= ``keep`` left behind: queue entries they delivered are
    queued again (CI-6); checkpoints past ``keep`` go, and so do commit ids that no longer
    survive (IDEM-2) and compactions whose boundary is past the cut (CS-11)."""
    for queue in queues:
        for key in reopen_on_truncate({k: index for k, (_, index) in queue.items()}, keep):
            queue[key] = (queue[key][0], None)
    for cid in [cid for cid, cp in checkpoints.items() if cp.message_count > keep]:
        del checkpoints[cid]
    for cid in [cid for cid, result in commits.items() if not commit_survives(result, keep)]:
        del commits[cid]
    compactions[:] = [c for c in compactions if c[0] <= keep]
