"""Reading an export file line by line: one session's block in memory at a time (EXP-6).

Every refusal is an :class:`ExportFileError` naming the file, the line and the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import pydantic

from ..context.models import OutputRef
from ..dumps import SessionDump
from ..errors import ValidationError
from ..inputs import check_id
from ..messages import JsonObject, describe, parse_message
from ..models import Checkpoint, CommitResult, LateAnswer, PendingApproval, RunInfo
from ..models import StoredContextItem
from ..seam import Snapshot, StoredRow
from ._records import FORMAT, VERSION

__all__ = ["ExportFileError", "ScopedMap", "SessionBlock", "read_export"]

_M = TypeVar("_M", bound=pydantic.BaseModel)


class ExportFileError(ValidationError):
    """An export file that cannot be carried whole: ``line`` (from 1; 0 for the file as
    a whole) and ``field`` say where; nothing of it was written (EXP-7)."""

    def __init__(
        self, name: str, line: int, field: str | None, why: str, session_id: str | None = None
    ) -> None:
        where = f"{name} line {line}" if line else name
        if session_id is not None:
            where += f" (session {session_id!r})"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {why}", session_id=session_id)
        self.line = line
        self.field = field


@dataclass(frozen=True, slots=True)
class ScopedMap:
    """An app or user map of scoped state, as the file holds it."""

    scope: str
    owner: str
    values: JsonObject
    line: int


@dataclass(frozen=True, slots=True)
class SessionBlock:
    """One session's block: every record as a :class:`SessionDump`; ``line`` is the line
    of its ``session`` record."""

    dump: SessionDump
    line: int


class _Bad(Exception):
    def __init__(self, field: str | None, why: str) -> None:
        super().__init__(why)
        self.field = field
        self.why = why


def _get(record: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    if key not in record:
        raise _Bad(key, "missing")
    value = record[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _types(kind)):
        raise _Bad(key, f"{value!r} is not of the expected type")
    return value


def _id(record: dict[str, Any], key: str, *, optional: bool = False) -> str | None:
    value = record.get(key) if optional else _get(record, key, str)
    try:
        return check_id(value, key, optional=optional)
    except ValidationError as exc:
        raise _Bad(key, exc.message) from None


def _keys(record: dict[str, Any], key: str) -> JsonObject:
    values: JsonObject = _get(record, key, dict)
    for name in values:
        try:
            check_id(name, key)
        except ValidationError as exc:
            raise _Bad(key, exc.message) from None
    return values


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _types(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _model(record: dict[str, Any], key: str, model: type[_M]) -> _M:
    try:
        return model.model_validate(_get(record, key, dict))
    except pydantic.ValidationError as exc:
        raise _Bad(key, describe(exc)) from None


def _row(record: dict[str, Any], key: str) -> StoredRow:
    try:
        return parse_message(_get(record, key, dict))
    except ValidationError as exc:
        raise _Bad(key, exc.message) from None


def _at(record: dict[str, Any], key: str) -> datetime:
    try:
        at = datetime.fromisoformat(_get(record, key, str))
    except ValueError:
        raise _Bad(key, f"{record[key]!r} is not an ISO 8601 time") from None
    if at.tzinfo is None:
        raise _Bad(key, f"{record[key]!r} has no UTC offset")
    return at


def _index(record: dict[str, Any], key: str) -> int:
    value = _get(record, key, int)
    if value < 0:
        raise _Bad(key, f"{value} is negative")
    return int(value)


def _delivered(record: dict[str, Any]) -> int | None:
    return None if record.get("delivered") is None else _index(record, "delivered")


@dataclass
class _Block:
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
            raise _Bad("type", f"unknown record type {kind!r}")
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
                raise _Bad(where, f"{index} is past the session's {count} rows")

    def dump(self) -> SessionDump:
        """The block as a :class:`SessionDump` (its version is meaningless: 0)."""
        head = self.head
        first = head["first_index"]
        if head["message_count"] != first + len(self.rows):
            raise _Bad(
                "message_count",
                f"{head['message_count']} is not first_index {first} plus the "
                f"{len(self.rows)} rows of the block",
            )
        self._check_indexes(head["message_count"])
        run = head["run"]
        if run is not None and run.run_id not in head["run_ids"]:
            raise _Bad("run_ids", f"lacks the current run {run.run_id!r}")
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
        raise _Bad(field, f"{key!r} appears twice in the session's block")


def _add_row(b: _Block, r: dict[str, Any]) -> None:
    expected = b.head["first_index"] + len(b.rows)
    if _index(r, "index") != expected:
        raise _Bad("index", f"{r['index']} is out of sequence (expected {expected})")
    b.rows.append(_row(r, "row"))


def _add_archived(b: _Block, r: dict[str, Any]) -> None:
    index = _index(r, "index")
    if b.archive and index != b.archive[-1][0] + 1:
        raise _Bad("index", f"{index} is out of sequence (expected {b.archive[-1][0] + 1})")
    b.archive.append((index, _row(r, "row")))


def _add_item(b: _Block, r: dict[str, Any]) -> None:
    item = _model(r, "item", StoredContextItem)
    _once(b.items, item.key, "item.key")
    b.items[item.key] = (item, _delivered(r))


def _add_late(b: _Block, r: dict[str, Any]) -> None:
    answer = _model(r, "answer", LateAnswer)
    _once(b.late, answer.call_id, "answer.call_id")
    b.late[answer.call_id] = (answer, _delivered(r))


def _add_approval(b: _Block, r: dict[str, Any]) -> None:
    approval = _model(r, "approval", PendingApproval)
    _once(b.pending, approval.approval_id, "approval.approval_id")
    b.pending[approval.approval_id] = approval


def _add_resolved(b: _Block, r: dict[str, Any]) -> None:
    approval_id = str(_id(r, "approval_id"))
    _once(b.resolved, approval_id, "approval_id")
    if approval_id in b.pending:
        raise _Bad("approval_id", f"{approval_id!r} is also pending")
    b.resolved.add(approval_id)


def _add_checkpoint(b: _Block, r: dict[str, Any]) -> None:
    cp = _model(r, "checkpoint", Checkpoint)
    _once(b.checkpoints, cp.checkpoint_id, "checkpoint.checkpoint_id")
    b.checkpoints[cp.checkpoint_id] = cp


def _add_commit(b: _Block, r: dict[str, Any]) -> None:
    commit_id = str(_id(r, "commit_id"))
    _once(b.commits, commit_id, "commit_id")
    b.commits[commit_id] = CommitResult(
        first_index=_index(r, "first_index"), message_count=_index(r, "message_count")
    )


def _add_output(b: _Block, r: dict[str, Any]) -> None:
    ref = _model(r, "ref", OutputRef)
    _once(b.outputs, ref.output_id, "ref.output_id")
    b.outputs[ref.output_id] = (ref, _get(r, "text", str))


def _add_compaction(b: _Block, r: dict[str, Any]) -> None:
    b.compactions.append((_index(r, "boundary"), _row(r, "summary")))


_ADDERS: dict[str, Callable[[_Block, dict[str, Any]], None]] = {
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


def _head(r: dict[str, Any]) -> dict[str, Any]:
    """The checked fields of a ``session`` record."""
    run = r.get("run")
    run_ids = _get(r, "run_ids", list)
    for rid in run_ids:
        try:
            check_id(rid, "run_ids")
        except ValidationError as exc:
            raise _Bad("run_ids", exc.message) from None
    return {
        "session": _id(r, "session"),
        "user_id": _id(r, "user_id", optional=True),
        "metadata": _get(r, "metadata", dict),
        "created_at": _at(r, "created_at"),
        "last_activity_at": _at(r, "last_activity_at"),
        "message_count": _index(r, "message_count"),
        "first_index": _index(r, "first_index"),
        "ui_count": _index(r, "ui_count"),
        "run": None if run is None else _model(r, "run", RunInfo),
        "run_ids": run_ids,
        "preserved": _get(r, "preserved", bool),
        "scoped": _keys(r, "scoped"),
    }


def _header(record: dict[str, Any]) -> None:
    if record.get("type") != FORMAT:
        raise _Bad("type", f"not a {FORMAT} file")
    version = record.get("version")
    if version != VERSION:
        raise _Bad(
            "version",
            f"version {version!r}: this release reads version {VERSION} only; export the "
            "source again with it (docs/export.md, EXP-1)",
        )


def read_export(lines: Iterable[str], name: str) -> Iterator[ScopedMap | SessionBlock]:
    """Each map and each session block of the file, as soon as it is complete; an
    :class:`ExportFileError` at the first line that is not right, and at the end if the
    ``end`` record is missing or its counts differ (a file cut short)."""
    block: _Block | None = None
    seen: set[str] = set()
    sessions = maps = records = 0
    number = 0
    ended = False
    for number, line in enumerate(lines, 1):
        try:
            if ended:
                raise _Bad(None, "data after the end record")
            try:
                record = json.loads(line, parse_constant=_no_constant)
            except (ValueError, RecursionError) as exc:
                raise _Bad(None, f"not JSON: {exc}") from None
            if not isinstance(record, dict):
                raise _Bad(None, "not a JSON object")
            if number == 1:
                _header(record)
                continue
            kind = record.get("type")
            if block is not None and kind in ("session", "scoped", "end"):
                yield _finish(block, name)
                records += block.records
                block = None
            if kind == "session":
                head = _head(record)
                if head["session"] in seen:
                    raise _Bad("session", f"a second block of session {head['session']!r}")
                seen.add(head["session"])
                block = _Block(head, number)
                sessions += 1
            elif kind == "scoped":
                scope = _get(record, "scope", str)
                if scope not in ("app", "user"):
                    raise _Bad("scope", f"{scope!r} is not app or user")
                owner = str(_id(record, "owner"))
                yield ScopedMap(scope, owner, _keys(record, "values"), number)
                maps += 1
            elif kind == "end":
                counts = {"sessions": sessions, "maps": maps, "records": records}
                for key, count in counts.items():
                    if record.get(key) != count:
                        raise _Bad(key, f"{record.get(key)!r}, but the file holds {count}")
                ended = True
            elif block is None or record.get("session") != block.head["session"]:
                raise _Bad("session", "a record outside its session's block")
            else:
                block.add(str(kind), record)
        except _Bad as bad:
            sid = None if block is None else block.head["session"]
            raise ExportFileError(name, number, bad.field, bad.why, sid) from None
    if number == 0:
        raise ExportFileError(name, 0, None, f"empty file, not a {FORMAT} file")
    if not ended:
        raise ExportFileError(name, 0, None, "no end record: the file was cut short")


def _finish(block: _Block, name: str) -> SessionBlock:
    try:
        return SessionBlock(block.dump(), block.line)
    except _Bad as bad:
        raise ExportFileError(name, block.line, bad.field, bad.why, block.head["session"]) from None
