"""A :class:`SessionDump` as the records of an export file, in their one order (EXP-4)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from ..base._plumbing import row_message
from ..dumps import SessionDump
from ..messages import JsonObject, dump_message
from ..seam import StoredRow

__all__ = ["FORMAT", "VERSION", "dumps", "map_record", "session_records"]

FORMAT = "helix-store-export"
"""The ``type`` of an export file's header (EXP-1)."""
VERSION = 2
"""The format version this release writes and reads (EXP-1)."""


def dumps(record: dict[str, Any]) -> str:
    """One line of the file (ASCII: non-ASCII text is escaped, so any locale reads it)."""
    return json.dumps(record, separators=(",", ":")) + "\n"


def _json(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True)


def _row(row: StoredRow) -> dict[str, Any]:
    return dump_message(row_message(row))


def map_record(scope: str, owner: str, values: JsonObject) -> dict[str, Any]:
    """The record of one app or user map of scoped state (EXP-3)."""
    values = dict(sorted(values.items()))
    return {"type": "scoped", "scope": scope, "owner": owner, "values": values}


def session_records(dump: SessionDump) -> Iterator[dict[str, Any]]:
    """The session's block: its ``session`` record, then every record it holds, each kind
    in a fixed order (rows by index, keyed records by key), so equal sessions give equal
    blocks whatever the backend."""
    snap = dump.snapshot
    sid = snap.session_id
    run = snap.current_run
    yield {
        "type": "session",
        "session": sid,
        "user_id": snap.user_id,
        "metadata": snap.metadata,
        "created_at": snap.created_at.isoformat(),
        "last_activity_at": snap.last_activity_at.isoformat(),
        "message_count": snap.message_count,
        "first_index": snap.first_index,
        "ui_count": snap.ui_count,
        "run": None if run is None else _json(run),
        "run_ids": sorted(dump.run_ids),
        "preserved": snap.preserved,
        "scoped": dict(sorted(snap.session_scoped.items())),
    }
    for offset, row in enumerate(snap.rows):
        yield {"type": "row", "session": sid, "index": snap.rows_from + offset, "row": _row(row)}
    for index, row in snap.archive:  # in write order: an index may repeat (CS-19)
        yield {"type": "archived", "session": sid, "index": index, "row": _row(row)}
    for item, at in sorted(dump.context_items, key=lambda entry: entry[0].key):
        yield {
            "type": "context_item",
            "session": sid,
            "item": item.model_dump(mode="json", by_alias=True, exclude_unset=True),
            "delivered": at,
        }
    for answer, at in sorted(dump.late_answers, key=lambda entry: entry[0].call_id):
        yield {"type": "late_answer", "session": sid, "answer": _json(answer), "delivered": at}
    for approval in sorted(snap.pending, key=lambda a: a.approval_id):
        yield {"type": "approval", "session": sid, "approval": _json(approval)}
    for approval_id in sorted(dump.resolved):
        yield {"type": "resolved", "session": sid, "approval_id": approval_id}
    for cp in sorted(snap.checkpoints, key=lambda cp: cp.checkpoint_id):
        yield {"type": "checkpoint", "session": sid, "checkpoint": _json(cp)}
    for commit_id, result in sorted(dump.commits, key=lambda entry: entry[0]):
        yield {
            "type": "commit",
            "session": sid,
            "commit_id": commit_id,
            "first_index": result.first_index,
            "message_count": result.message_count,
        }
    for ref, text in sorted(dump.outputs, key=lambda entry: entry[0].output_id):
        yield {"type": "output", "session": sid, "ref": _json(ref), "text": text}
    for boundary, summary in dump.compactions:
        yield {"type": "compaction", "session": sid, "boundary": boundary, "summary": _row(summary)}
