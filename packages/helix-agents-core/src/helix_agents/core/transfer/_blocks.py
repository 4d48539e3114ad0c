"""One session's block of an export file, built record by record (docs/export.md, EXP-7)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..context.models import OutputRef
from ..dumps import SessionDump
from ..models import Checkpoint, CommitResult, LateAnswer, PendingApproval, StoredContextItem
from ..seam import Snapshot, StoredRow
from ._fields import (
    FieldError,
    delivered_field,
    get_field,
    id_field,
    index_field,
    model_field,
    row_field,
)

__all__ = ["Block"]


@dataclass
class Block:
    """A session's records as they are read, checked one by one."""

    head: dict[str, Any]
    line: int
    rows: list[StoredRow] = field(default_factory=list)
    archive: list[tuple[int, StoredRow]] = field(default_factory=list)
    items: dict[str, tuple[StoredContextItem, int | None]] = field(default_factory=dict)
    late: dict[str, tuple[LateAnswer, int | None]] = field(default_factory=dict)
    pending: dict[str, PendingApproval] = field(default_factory=dict)
    resolved: set[str] = field(default_factory=set)
    checkpoints: dict[str, Checkpoint] = field(default_factory=dict)
    commits: dict[str, CommitResult] = field(default_factory=dict)
    outputs: dict[str, tuple[OutputRef, str]] = field(default_factory=dict)
    compactions: list[tuple[int, StoredRow]] = field(default_factory=list)
    records: int = 0

    def add(self, kind: str, record: dict[str, Any]) -> None:
        """Check one record of the block and keep it."""
        adder = _ADDERS.get(kind)
        if adder is None:
            raise FieldError("type", f"unknown record type {kind!r}")
        adder(self, record)
        self.records += 1

    def _check_indexes(self, count: int) -> None:
        """Every index a record names is a row the session has (or had)."""
        named = [
            *(("item.delivered", at) for _, at in self.items.values()),
            *(("answer.delivered", at) for _, at in self.late.values()),
            *(("checkpoint.message_count", cp.message_count) for cp in self.checkpoints.values()),
            *(("commit.message_count", c.message_count) for c in self.commits.values()),
            *(("compaction.boundary", boundary) for boundary, _ in self.compactions),
        ]
        for where, index in named:
            if index is not None and index > count - where.endswith("delivered"):
                raise FieldError(where, f"{index} is past the session's {count} rows")

    def dump(self) -> SessionDump:
        """The block as a :class:`SessionDump` (its version is meaningless: 0)."""
        head = self.head
        first = head["first_index"]
        if head["message_count"] != first + len(self.rows):
            raise FieldError(
                "message_count",
                f"{head['message_count']} is not first_index {first} plus the "
                f"{len(self.rows)} rows of the block",
            )
        self._check_indexes(head["message_count"])
        run = head["run"]
        if run is not None and run.run_id not in head["run_ids"]:
            raise FieldError("run_ids", f"lacks the current run {run.run_id!r}")
        snapshot = Snapshot(
            session_id=head["session"],
            version=0,
            user_id=head["user_id"],
            created_at=head["created_at"],
            last_activity_at=head["last_activity_at"],
            metadata=head["metadata"],
            message_count=head["message_count"],
            first_index=first,
            ui_count=head["ui_count"],
            current_run=head["run"],
            window_start=self.compactions[-1][0] if self.compactions else 0,
            compactions=len(self.compactions),
            preserved=head["preserved"],
            rows_from=first,
            rows=self.rows,
            pending=list(self.pending.values()),
            checkpoints=list(self.checkpoints.values()),
            archive=self.archive,
            session_scoped=head["scoped"],
        )
        return SessionDump(
            snapshot=snapshot,
            run_ids=head["run_ids"],
            context_items=list(self.items.values()),
            late_answers=list(self.late.values()),
            resolved=sorted(self.resolved),
            commits=list(self.commits.items()),
            outputs=list(self.outputs.values()),
            compactions=self.compactions,
        )


def _once(table: dict[str, Any] | set[str], key: str, field: str) -> None:
    if key in table:
        raise FieldError(field, f"{key!r} appears twice in the session's block")


def _add_row(b: Block, r: dict[str, Any]) -> None:
    expected = b.head["first_index"] + len(b.rows)
    if index_field(r, "index") != expected:
        raise FieldError("index", f"{r['index']} is out of sequence (expected {expected})")
    b.rows.append(row_field(r, "row"))


def _add_archived(b: Block, r: dict[str, Any]) -> None:
    # In the archive's write order: any index, repeated or not (CS-19).
    b.archive.append((index_field(r, "index"), row_field(r, "row")))


def _add_item(b: Block, r: dict[str, Any]) -> None:
    item = model_field(r, "item", StoredContextItem)
    _once(b.items, item.key, "item.key")
    b.items[item.key] = (item, delivered_field(r))


def _add_late(b: Block, r: dict[str, Any]) -> None:
    answer = model_field(r, "answer", LateAnswer)
    _once(b.late, answer.call_id, "answer.call_id")
    b.late[answer.call_id] = (answer, delivered_field(r))


def _add_approval(b: Block, r: dict[str, Any]) -> None:
    approval = model_field(r, "approval", PendingApproval)
    _once(b.pending, approval.approval_id, "approval.approval_id")
    b.pending[approval.approval_id] = approval


def _add_resolved(b: Block, r: dict[str, Any]) -> None:
    approval_id = str(id_field(r, "approval_id"))
    _once(b.resolved, approval_id, "approval_id")
    if approval_id in b.pending:
        raise FieldError("approval_id", f"{approval_id!r} is also pending")
    b.resolved.add(approval_id)


def _add_checkpoint(b: Block, r: dict[str, Any]) -> None:
    cp = model_field(r, "checkpoint", Checkpoint)
    _once(b.checkpoints, cp.checkpoint_id, "checkpoint.checkpoint_id")
    b.checkpoints[cp.checkpoint_id] = cp


def _add_commit(b: Block, r: dict[str, Any]) -> None:
    commit_id = str(id_field(r, "commit_id"))
    _once(b.commits, commit_id, "commit_id")
    b.commits[commit_id] = CommitResult(
        first_index=index_field(r, "first_index"), message_count=index_field(r, "message_count")
    )


def _add_output(b: Block, r: dict[str, Any]) -> None:
    ref = model_field(r, "ref", OutputRef)
    _once(b.outputs, ref.output_id, "ref.output_id")
    b.outputs[ref.output_id] = (ref, get_field(r, "text", str))


def _add_compaction(b: Block, r: dict[str, Any]) -> None:
    b.compactions.append((index_field(r, "boundary"), row_field(r, "summary")))


_ADDERS: dict[str, Callable[[Block, dict[str, Any]], None]] = {
    "row": _add_row,
    "archived": _add_archived,
    "context_item": _add_item,
    "late_answer": _add_late,
    "approval": _add_approval,
    "resolved": _add_resolved,
    "checkpoint": _add_checkpoint,
    "commit": _add_commit,
    "output": _add_output,
    "compaction": _add_compaction,
}
