"""What the scripts are sent and answer: a Want and a Changes as JSON for ``cjson``, rows
as stored text, and a snapshot read back from the reply of lua/_snapshot.lua."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pydantic

from helix_agents.core import (
    Checkpoint,
    CommitResult,
    ContextMessage,
    LateAnswer,
    PendingApproval,
    StoredContextItem,
    ValidationError,
)
from helix_agents.core.backend import (
    Changes,
    Queue,
    Snapshot,
    Want,
    dump_message_json,
    parse_message_json,
    rows_json,
)
from helix_agents.core.context import OutputRef
from helix_agents.core.models import RunInfo

__all__ = [
    "head_of_reply",
    "QUEUE_PREFIX",
    "changes_json",
    "dump",
    "from_micros",
    "micros",
    "snapshot_of",
    "split_reply",
    "stored_rows",
    "text",
    "want_json",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
QUEUE_PREFIX: dict[Queue, str] = {"context": "c:", "late": "l:"}
_QUEUED: dict[Queue, type[StoredContextItem] | type[LateAnswer]] = {
    "context": StoredContextItem,
    "late": LateAnswer,
}


def micros(at: datetime) -> int:
    """``at`` as integer microseconds since the epoch (a naive time is taken as UTC)."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return (at - _EPOCH) // _MICROSECOND


def from_micros(value: Any) -> datetime:
    """The UTC datetime of a microsecond count (as stored or returned by a script)."""
    return _EPOCH + timedelta(0, 0, int(value))


def text(value: Any) -> Any:
    """A reply with every ``bytes`` decoded, whatever the client's ``decode_responses``."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, list):
        return [text(v) for v in value]
    return value


def dump(record: pydantic.BaseModel) -> str:
    """A record as JSON, keeping which fields were set."""
    try:
        return record.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError as exc:  # pydantic_core.PydanticSerializationError
        raise ValidationError(f"{type(record).__name__} cannot be stored as JSON: {exc}") from None


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def want_json(want: Want) -> str:
    """``want`` as lua/_snapshot.lua reads it (only what it asks)."""
    w: dict[str, Any] = {}
    if want.commit_id is not None:
        w["c"] = want.commit_id
    if want.run_id is not None:
        w["r"] = want.run_id
    if want.queue_keys:
        w["qk"] = [QUEUE_PREFIX[q] + k for q, keys in want.queue_keys.items() for k in keys]
    if want.approval_ids:
        w["ai"] = list(want.approval_ids)
    if want.checkpoint_ids:
        w["ci"] = list(want.checkpoint_ids)
    if want.output_key is not None:
        w["ok"] = want.output_key
    if want.output_id is not None:
        w["oi"], w["ot"] = want.output_id, want.output_text
    if want.rows is not None:
        span = want.rows
        hi, limit = -1 if span.hi is None else span.hi, -1 if span.limit is None else span.limit
        w["rows"] = [span.lo, hi, limit, span.last]
    if want.queued is not None:
        w["qd"] = QUEUE_PREFIX[want.queued]
    if want.checkpoints == "all":
        w["cks"] = "all"
    elif want.checkpoints is not None:
        where = want.checkpoints
        high = "+" if where.high is None else "(" + where.high
        w["cks"] = ["[" + where.low, high, where.limit]
    for name, on in (("pend", want.pending), ("win", want.window), ("arch", want.archive)):
        if on:
            w[name] = True
    if want.session_scoped:
        w["scs"] = True
    return _compact(w) if w else "{}"


def stored_rows(changes: Changes) -> list[str]:
    """The new rows as stored: 'c' (a context row) or 'm', then the row's JSON."""
    return [
        ("c" if row.role == "context" else "m") + text
        for row, text in zip(changes.rows, rows_json(changes), strict=True)
    ]


def changes_json(changes: Changes, shared: str, tokens: Mapping[str, str]) -> str:
    """``changes`` (but its rows, sent apart) as lua/apply.lua reads them; ``shared`` is the
    journal entry of its app and user deltas, ``tokens`` their maps' writer tokens."""
    c: dict[str, Any] = {"la": micros(changes.activity)}
    if changes.clear:
        c["clear"] = True
    if changes.cut_to is not None:
        c["cut"] = changes.cut_to
    if changes.run is not None:
        c["run"] = [changes.run.run_id, changes.run.model_dump_json()]
    if changes.deliveries:
        c["dl"] = [[QUEUE_PREFIX[q] + key, index] for q, key, index in changes.deliveries]
    if changes.enqueue is not None:
        record = changes.enqueue
        if isinstance(record, LateAnswer):
            c["enq"] = ["l:" + record.call_id, dump(record)]
        else:
            c["enq"] = ["c:" + record.key, dump(record)]
    pairs = [
        part
        for (scope, _), values in changes.scoped.items()
        if scope == "session"
        for key, value in values.items()
        for part in (key, _compact(value))
    ]
    if pairs:
        c["scs"] = pairs
    if shared:
        c["shared"], c["tok"] = shared, [v for pair in tokens.items() for v in pair]
    if changes.commit is not None:
        cid, result = changes.commit
        c["cmt"] = [cid, result.message_count, result.model_dump_json()]
    if changes.drop_below is not None:
        c["drop"], c["archive"] = changes.drop_below, changes.archive
    if changes.archived:  # as the list holds them: '<index> <stored row>'
        c["arch"] = [
            f"{index} {'c' if row.role == 'context' else 'm'}{dump_message_json(row)}"
            for index, row in changes.archived
        ]
    if changes.approvals:
        c["appr"] = [[a.approval_id, dump(a)] for a in changes.approvals]
    if changes.resolve is not None:
        c["res"] = changes.resolve
    if changes.checkpoint is not None:
        cp = changes.checkpoint
        c["ckpt"] = [cp.checkpoint_id, cp.message_count, dump(cp)]
    if changes.delete_checkpoints:
        c["dck"] = list(changes.delete_checkpoints)
    if changes.output is not None:
        ref, content = changes.output
        c["out"] = [ref.output_id, ref.key or "", ref.model_dump_json(), content]
    if changes.compaction is not None:
        boundary, summary = changes.compaction
        c["cmp"] = [boundary, dump_message_json(summary)]
    if changes.preserve:
        c["pres"] = True
    if changes.metadata is not None:
        c["md"] = _compact(changes.metadata)
    if changes.redact is not None:  # as the list holds it: 'c' or 'm', then the row's JSON
        index, row = changes.redact
        c["red"] = [index, ("c" if row.role == "context" else "m") + dump_message_json(row)]
    return _compact(c)


def _pairs(flat: Sequence[Any]) -> list[tuple[Any, Any]]:
    return list(zip(flat[::2], flat[1::2], strict=True))


# cjson's text as the scripts build it: Lua's nil reads as false, an empty table as {}
# (falsy, like the empty list it stands for), so the readers below test truth, not type.


def _head(session_id: str, h: Sequence[Any]) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "version": int(h[0]),
        "user_id": h[4] or None,
        "created_at": from_micros(h[1]),
        "last_activity_at": from_micros(h[2]),
        "metadata": json.loads(h[3]),
        "message_count": int(h[6]),
        "first_index": int(h[5]),
        "ui_count": int(h[7]),
        "current_run": RunInfo.model_validate_json(h[8]) if h[8] else None,
        "window_start": int(h[10]),
        "compactions": int(h[9]),
        "preserved": h[11] == "1",
    }


def head_of_reply(session_id: str, encoded: str) -> Snapshot:
    """The head of a session from a landed apply's reply (the head's fields as JSON)."""
    return Snapshot(**_head(session_id, json.loads(encoded)))


def split_reply(encoded: str) -> tuple[list[Any], list[str]]:
    """lua/_snapshot.lua's reply: its JSON part, and the rows as stored (kind mark first)."""
    head, _, rows = encoded.partition("\n")
    reply: list[Any] = json.loads(head)
    return reply, rows.split("\n") if reply[9] else []


def snapshot_of(session_id: str, encoded: str, want: Want) -> Snapshot:
    """The :class:`Snapshot` of lua/_snapshot.lua's reply to ``want``."""
    reply, stored = split_reply(encoded)
    queue_state: dict[Queue, dict[str, int | None]] = {q: {} for q in want.queue_keys}
    for entry, index in _pairs(reply[3] or ()):
        queue: Queue = "context" if entry[:2] == "c:" else "late"
        queue_state.setdefault(queue, {})[entry[2:]] = int(index) if index else None
    named = [Checkpoint.model_validate_json(cp) for cp in reply[5] or () if cp]
    output = reply[7]
    summary = None
    if reply[13]:
        parsed = parse_message_json(reply[13].partition(" ")[2])
        summary = parsed if isinstance(parsed, ContextMessage) else None
    queued: list[StoredContextItem | LateAnswer] = []
    if want.queued is not None:
        model = _QUEUED[want.queued]
        queued = [model.model_validate_json(record) for record in reply[10] or ()]
    return Snapshot(
        **_head(session_id, reply[0]),
        replay=CommitResult.model_validate_json(reply[1]) if reply[1] else None,
        run_id_used=reply[2] == 1,
        queue_state=queue_state,
        approval_state=dict(_pairs(reply[4] or ())),
        named_checkpoints={cp.checkpoint_id: cp for cp in named},
        keyed_output=OutputRef.model_validate_json(reply[6]) if reply[6] else None,
        output=(OutputRef.model_validate_json(output[0]), output[1]) if output else None,
        rows_from=int(reply[8]),
        rows=[row[1:] for row in stored],
        queued=queued,
        pending=[PendingApproval.model_validate_json(a) for a in reply[11] or ()],
        checkpoints=[Checkpoint.model_validate_json(cp) for cp in reply[12] or () if cp],
        summary=summary,
        archive=[(int(i), row[1:]) for i, _, row in (a.partition(" ") for a in reply[14] or ())],
        session_scoped={key: json.loads(value) for key, value in _pairs(reply[15] or ())},
    )
