"""Reading an export file line by line: one session's block in memory at a time (EXP-6).

Every refusal is an :class:`ExportFileError` naming the file, the line and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..dumps import SessionDump
from ..errors import ValidationError
from ..messages import JsonObject
from ._blocks import Block
from ._fields import FieldError, get_field, head_fields, id_field, keys_field, no_constant
from ._records import FORMAT, VERSION

__all__ = ["ExportFileError", "ScopedMap", "SessionBlock", "read_export"]


class ExportFileError(ValidationError):
    """An export file that cannot be carried whole: in file ``name``, ``line`` (from 1; 0
    for the file as a whole) and ``field`` say where, ``why`` what; nothing of it was
    written (EXP-7)."""

    def __init__(
        self, name: str, line: int, field: str | None, why: str, session_id: str | None = None
    ) -> None:
        where = f"{name} line {line}" if line else name
        if session_id is not None:
            where += f" (session {session_id!r})"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {why}", session_id=session_id)
        self.name = name
        self.why = why
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


def _header(record: dict[str, Any]) -> None:
    if record.get("type") != FORMAT:
        raise FieldError("type", f"not a {FORMAT} file")
    version = record.get("version")
    if version != VERSION:
        raise FieldError(
            "version",
            f"version {version!r}: this release reads version {VERSION} only; export the "
            "source again with it (docs/export.md, EXP-1)",
        )


def read_export(lines: Iterable[str], name: str) -> Iterator[ScopedMap | SessionBlock]:
    """Each map and each session block of the file, as soon as it is complete; an
    :class:`ExportFileError` at the first line that is not right, and at the end if the
    ``end`` record is missing or its counts differ (a file cut short)."""
    block: Block | None = None
    seen: set[str] = set()
    sessions = maps = records = 0
    number = 0
    ended = False
    for number, line in enumerate(lines, 1):
        try:
            if ended:
                raise FieldError(None, "data after the end record")
            try:
                record = json.loads(line, parse_constant=no_constant)
            except (ValueError, RecursionError) as exc:
                raise FieldError(None, f"not JSON: {exc}") from None
            if not isinstance(record, dict):
                raise FieldError(None, "not a JSON object")
            if number == 1:
                _header(record)
                continue
            kind = record.get("type")
            if block is not None and kind in ("session", "scoped", "end"):
                yield _finish(block, name)
                records += block.records
                block = None
            if kind == "session":
                head = head_fields(record)
                if head["session"] in seen:
                    raise FieldError("session", f"a second block of session {head['session']!r}")
                seen.add(head["session"])
                block = Block(head, number)
                sessions += 1
            elif kind == "scoped":
                scope = get_field(record, "scope", str)
                if scope not in ("app", "user"):
                    raise FieldError("scope", f"{scope!r} is not app or user")
                owner = str(id_field(record, "owner"))
                yield ScopedMap(scope, owner, keys_field(record, "values"), number)
                maps += 1
            elif kind == "end":
                counts = {"sessions": sessions, "maps": maps, "records": records}
                for key, count in counts.items():
                    if record.get(key) != count:
                        raise FieldError(key, f"{record.get(key)!r}, but the file holds {count}")
                ended = True
            elif block is None or record.get("session") != block.head["session"]:
                raise FieldError("session", "a record outside its session's block")
            else:
                block.add(str(kind), record)
        except FieldError as bad:
            sid = None if block is None else block.head["session"]
            raise ExportFileError(name, number, bad.field, bad.why, sid) from None
    if number == 0:
        raise ExportFileError(name, 0, None, f"empty file, not a {FORMAT} file")
    if not ended:
        raise ExportFileError(name, 0, None, "no end record: the file was cut short")


def _finish(block: Block, name: str) -> SessionBlock:
    try:
        return SessionBlock(block.dump(), block.line)
    except FieldError as bad:
        raise ExportFileError(name, block.line, bad.field, bad.why, block.head["session"]) from None
