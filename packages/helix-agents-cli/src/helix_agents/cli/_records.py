"""The export file: JSON Lines, one record per line, readable by any backend's import.

A file is a ``header`` record, then per session a ``session`` record followed by
its ``row``, ``checkpoint``, ``approval``, ``context_item`` and ``late_answer``
records, then an ``end`` record with the counts (a file cut short is refused
before anything is written). docs/cli.md describes each record.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from helix_agents.core import (
    Checkpoint,
    LateAnswer,
    Message,
    PendingApproval,
    StoredContextItem,
    ValidationError,
)
from helix_agents.core.messages import parse_message
from helix_agents.core.models import RunInfo

from ._errors import CliError, ExitCode

__all__ = ["FORMAT", "VERSION", "SessionBundle", "dumps", "read_bundles"]

FORMAT = "helix-store-export"
VERSION = 1


def dumps(record: dict[str, Any]) -> str:
    """One line of the file (ASCII: non-ASCII text is escaped, so any locale reads it)."""
    return json.dumps(record, separators=(",", ":")) + "\n"


@dataclass
class SessionBundle:
    """Everything a file holds for one session."""

    session_id: str
    user_id: str | None
    metadata: dict[str, Any]
    first_index: int
    run: RunInfo | None
    rows: list[Message] = field(default_factory=list)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    approvals: list[PendingApproval] = field(default_factory=list)
    context_items: list[StoredContextItem] = field(default_factory=list)
    late_answers: list[LateAnswer] = field(default_factory=list)


def _bad(where: str, why: str) -> CliError:
    return CliError(f"{where}: {why}", ExitCode.USAGE)


def _add(bundle: SessionBundle, kind: str, record: dict[str, Any]) -> None:
    if kind == "row":
        if record.get("index") != bundle.first_index + len(bundle.rows):
            raise ValueError(f"row index {record.get('index')!r} is out of sequence")
        bundle.rows.append(parse_message(record["row"]))
    elif kind == "checkpoint":
        bundle.checkpoints.append(Checkpoint(**record["checkpoint"]))
    elif kind == "approval":
        bundle.approvals.append(PendingApproval(**record["approval"]))
    elif kind == "context_item":
        bundle.context_items.append(StoredContextItem(**record["item"]))
    elif kind == "late_answer":
        bundle.late_answers.append(LateAnswer(**record["answer"]))
    else:
        raise ValueError(f"unknown record type {kind!r}")


def read_bundles(lines: list[str], name: str) -> list[SessionBundle]:
    """Parse and check a whole file; :class:`CliError` naming the line if it is not one."""
    if not lines:
        raise _bad(name, "empty file, not a helix-store export")
    bundles: list[SessionBundle] = []
    seen: set[str] = set()
    records = 0
    ended = False
    for number, line in enumerate(lines, 1):
        where = f"{name} line {number}"
        if ended:
            raise _bad(where, "data after the end record")
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
            kind = record.get("type")
            if number == 1:
                if kind != FORMAT or record.get("version") != VERSION:
                    raise ValueError(f"not a {FORMAT} file of version {VERSION}")
            elif kind == "end":
                if record.get("sessions") != len(bundles) or record.get("records") != records:
                    raise ValueError("the counts of the end record do not match the file")
                ended = True
            elif kind == "session":
                if record["session"] in seen:
                    raise ValueError(f"a second block of session {record['session']!r}")
                seen.add(record["session"])
                run = record.get("run")
                bundles.append(
                    SessionBundle(
                        session_id=record["session"],
                        user_id=record["user_id"],
                        metadata=record["metadata"],
                        first_index=record["first_index"],
                        run=None if run is None else RunInfo(**run),
                    )
                )
            else:
                if not bundles or record.get("session") != bundles[-1].session_id:
                    raise ValueError("a record outside its session's block")
                _add(bundles[-1], str(kind), record)
                records += 1
        except (ValueError, KeyError, TypeError, RecursionError, ValidationError) as exc:
            raise _bad(where, str(exc)) from None
    if not ended:
        raise _bad(name, "no end record: the file was cut short")
    return bundles
