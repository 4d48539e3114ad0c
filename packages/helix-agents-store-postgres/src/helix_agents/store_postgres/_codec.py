"""The engine's wire format: a :class:`Want` and a :class:`Changes` as the ``jsonb``
arguments of the SQL functions, and their ``__agents_snap`` answer as a :class:`Snapshot`.

Payloads (rows, records, metadata, values) travel and rest as the JSON text core
made, inside JSON strings: ``jsonb`` never parses them, so NUL escapes and float
spellings come back exactly. Only ids, counts and flags are ``jsonb`` values.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import pydantic

from helix_agents.core import (
    Checkpoint,
    CommitResult,
    ContextMessage,
    LateAnswer,
    PendingApproval,
    StoredContextItem,
)
from helix_agents.core.backend import (
    Changes,
    Snapshot,
    Want,
    dump_message_json,
    parse_messages_json,
    rows_json,
)
from helix_agents.core.context import OutputRef
from helix_agents.core.models import RunInfo

__all__ = ["changes_json", "snapshot", "want_json"]

_M = TypeVar("_M", bound=pydantic.BaseModel)
_HEAD = Want()
_NOTHING: tuple[Any, ...] = (None, False, [], {})  # what a Want leaves out: not asked
_lists: dict[type[Any], pydantic.TypeAdapter[Any]] = {}


def _dump(model: pydantic.BaseModel) -> str:
    """The JSON text that validates back into ``model``, the fields it was given only."""
    return model.model_dump_json(by_alias=True, exclude_unset=True)


def want_json(want: Want) -> str:
    """The Want as ``__agents_read`` takes it: only what it asks for."""
    if want == _HEAD:
        return "{}"
    span, where = want.rows, want.checkpoints
    w = {
        "commit": want.commit_id,
        "run": want.run_id,
        "keys": {queue: list(keys) for queue, keys in want.queue_keys.items()},
        "approvals": list(want.approval_ids),
        "checkpoint_ids": list(want.checkpoint_ids),
        "output_key": want.output_key,
        "output_id": want.output_id,
        "output_text": want.output_text,
        "rows": None if span is None else [span.lo, span.hi, span.limit, span.last],
        "queued": want.queued,
        "pending": want.pending,
        "checkpoints": where
        if where is None or where == "all"
        else [where.low, where.high, where.limit],
        "window": want.window,
        "archive": want.archive,
        "scoped": want.session_scoped,
    }
    return json.dumps({key: value for key, value in w.items() if value not in _NOTHING})


def changes_json(changes: Changes) -> str:
    """The Changes as ``__agents_apply`` takes them: only the fields that change something."""
    c: dict[str, Any] = {"activity": changes.activity.isoformat()}
    if changes.clear:
        c["clear"] = True
    if changes.cut_to is not None:
        c["cut_to"] = changes.cut_to
    if changes.run is not None:
        c["run"], c["run_id"] = _dump(changes.run), changes.run.run_id
    if changes.rows:
        c["rows"] = list(rows_json(changes))
        context = [i for i, row in enumerate(changes.rows) if row.role == "context"]
        c["context"] = context
    if changes.deliveries:
        c["deliveries"] = [list(d) for d in changes.deliveries]
    record = changes.enqueue
    if record is not None:
        if isinstance(record, LateAnswer):
            c["enqueue"] = ["late", record.call_id, _dump(record)]
        else:
            c["enqueue"] = ["context", record.key, _dump(record)]
    shared = []
    for (scope, owner), values in changes.scoped.items():
        texts = {key: json.dumps(value) for key, value in values.items()}
        if scope == "session":
            c["session_scoped"] = texts
        else:
            shared.append([scope, owner, texts])
    if shared:
        c["scoped"] = shared
    if changes.commit is not None:
        commit_id, result = changes.commit
        c["commit"] = [commit_id, result.first_index, result.message_count]
    if changes.drop_below is not None:
        c["drop_below"] = changes.drop_below
        if changes.archive:
            c["archive"] = True
    if changes.archived:
        c["archived"] = [[index, dump_message_json(row)] for index, row in changes.archived]
    if changes.approvals:  # the last of an id wins, as when applied one by one
        fresh = {a.approval_id: _dump(a) for a in changes.approvals}
        c["approvals"] = [[aid, body] for aid, body in fresh.items()]
    if changes.resolve is not None:
        c["resolve"] = changes.resolve
    cp = changes.checkpoint
    if cp is not None:
        c["checkpoint"] = [cp.checkpoint_id, cp.message_count, _dump(cp)]
    if changes.delete_checkpoints:
        c["delete_checkpoints"] = list(changes.delete_checkpoints)
    if changes.output is not None:
        ref, text = changes.output
        c["output"] = [ref.output_id, ref.key, _dump(ref), json.dumps(text)]
    if changes.compaction is not None:
        boundary, summary = changes.compaction
        c["compaction"] = [boundary, dump_message_json(summary)]
    if changes.preserve:
        c["preserve"] = True
    if changes.metadata is not None:
        c["metadata"] = json.dumps(changes.metadata)
    if changes.redact is not None:
        index, row = changes.redact
        c["redact"] = [index, dump_message_json(row)]
    if len(c) == 3 and "rows" in c:  # rows alone: the applier's one-statement way
        c["plain"] = True
    return json.dumps(c)


def _result(text: str) -> CommitResult:
    first, count = json.loads(text)
    return CommitResult(first_index=first, message_count=count)


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _models(model: type[_M], text: str | None) -> list[_M]:
    if text is None:
        return []
    adapter = _lists.get(model)
    if adapter is None:
        adapter = _lists[model] = pydantic.TypeAdapter(list[model])  # type: ignore[valid-type]
    found: list[_M] = adapter.validate_json(text)
    return found


def snapshot(session_id: str, row: Sequence[Any], queue: str | None) -> Snapshot | None:
    """The snapshot an ``__agents_snap`` row answers (``queue``: the queue the Want listed);
    ``None`` when the session is gone."""
    (_, head, rows_from, rows, replay, run_used, queue_state, approval_state, named, keyed) = row[
        :10
    ]
    (output, queued, pending, checkpoints, summary, archive, scoped) = row[10:17]
    if head is None:
        return None
    version, user_id, created, last, metadata, count, first, ui, run, start, compactions, kept = (
        json.loads(head)
    )
    items: list[StoredContextItem | LateAnswer] = []
    if queued is not None:
        items = list(_models(LateAnswer if queue == "late" else StoredContextItem, queued))
    ref_text = None if output is None else json.loads(output)
    return Snapshot(
        session_id=session_id,
        version=version,
        user_id=user_id,
        created_at=_time(created),
        last_activity_at=_time(last),
        metadata=metadata,
        message_count=count,
        first_index=first,
        ui_count=ui,
        current_run=None if run is None else RunInfo.model_validate(run),
        window_start=start,
        compactions=compactions,
        preserved=kept,
        replay=None if replay is None else _result(replay),
        run_id_used=bool(run_used),
        queue_state={} if queue_state is None else json.loads(queue_state),
        approval_state={} if approval_state is None else json.loads(approval_state),
        named_checkpoints={cp.checkpoint_id: cp for cp in _models(Checkpoint, named)},
        keyed_output=None if keyed is None else OutputRef.model_validate_json(keyed),
        output=None if ref_text is None else (OutputRef.model_validate(ref_text[0]), ref_text[1]),
        rows_from=rows_from or 0,
        rows=() if rows is None else parse_messages_json(rows),
        queued=items,
        pending=_models(PendingApproval, pending),
        checkpoints=_models(Checkpoint, checkpoints),
        summary=None if summary is None else ContextMessage.model_validate_json(summary),
        archive=[] if archive is None else [(i, body) for i, body in json.loads(archive)],
        session_scoped={}
        if scoped is None
        else {key: json.loads(text) for key, text in json.loads(scoped).items()},
    )
