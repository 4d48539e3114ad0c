"""The context store on SQLite: outputs, compactions, archive, and history search in SQL.

History search runs in the database through a registered function,
``helix_history_hit``, that matches one stored row with RE2 and returns the
hit as JSON; SQLite stops reading rows once the limit is reached.
"""

from __future__ import annotations

import functools
import sqlite3

from pydantic import TypeAdapter

from helix_agents.core import ContextMessage
from helix_agents.core.backend import dump_message_json, parse_message_json
from helix_agents.core.context import (
    Compaction,
    CompactionResult,
    ContextWindow,
    HistoryHit,
    HistoryQuery,
    OutputNotFoundError,
    OutputRef,
    check_compaction,
    compaction_result,
    describe_output,
    new_output_id,
    required_literal,
    safe_literal,
    summary_row,
)

from ._rows import Clock, SessionRow, load_session, touch

__all__ = [
    "CONTEXT_TABLES",
    "archive_before",
    "compact",
    "forget_compactions",
    "history_hits",
    "load_output",
    "register_functions",
    "store",
    "window",
]

CONTEXT_TABLES = (
    "__agents_outputs",
    "__agents_compactions",
    "__agents_archive",
    "__agents_preserved",
)
_hit_json: TypeAdapter[HistoryHit] = TypeAdapter(HistoryHit)


def _history_hit(
    pattern: str | None, tool_name: str | None, body: str, idx: int, archived: int
) -> str | None:
    hit = _query(pattern, tool_name).hit(idx, body, archived=bool(archived))
    return None if hit is None else hit.model_dump_json()


@functools.lru_cache(maxsize=64)
def _query(pattern: str | None, tool_name: str | None) -> HistoryQuery:
    return HistoryQuery.matching(pattern, tool_name)


def register_functions(db: sqlite3.Connection) -> None:
    """Register the SQL functions the context queries use, on one connection."""
    db.create_function("helix_history_hit", 5, _history_hit, deterministic=True)


def store(
    db: sqlite3.Connection,
    sid: str,
    content: str,
    tool_name: str | None,
    key: str | None,
    clock: Clock,
) -> OutputRef:
    """Insert an output, or return the one already stored under ``key``."""
    row = load_session(db, sid)
    if key is not None:
        found = db.execute(
            "SELECT ref FROM __agents_outputs WHERE session_id = ? AND caller_key = ?",
            (sid, key),
        ).fetchone()
        if found is not None:
            ref = OutputRef.model_validate_json(found[0])
            return ref.model_copy(update={"replayed": True})
    ref = describe_output(
        content, output_id=new_output_id(), created_at=clock(), tool_name=tool_name, key=key
    )
    db.execute(
        "INSERT INTO __agents_outputs (session_id, output_id, caller_key, ref, content) "
        "VALUES (?, ?, ?, ?, ?)",
        (sid, ref.output_id, key, ref.model_dump_json(), content),
    )
    touch(db, row, clock)
    return ref


def load_output(
    db: sqlite3.Connection, sid: str, output_id: str, with_content: bool
) -> tuple[OutputRef, str]:
    """An output's reference (and text); the session must exist and hold it."""
    load_session(db, sid)
    column = "content" if with_content else "''"
    found = db.execute(
        f"SELECT ref, {column} FROM __agents_outputs WHERE session_id = ? AND output_id = ?",
        (sid, output_id),
    ).fetchone()
    if found is None:
        raise OutputNotFoundError(
            f"session {sid!r} has no stored output {output_id!r}", session_id=sid
        )
    return OutputRef.model_validate_json(found[0]), found[1]


def _latest(db: sqlite3.Connection, sid: str) -> tuple[int, int, str | None]:
    found = db.execute(
        "SELECT number, boundary, summary FROM __agents_compactions "
        "WHERE session_id = ? ORDER BY number DESC LIMIT 1",
        (sid,),
    ).fetchone()
    return (0, 0, None) if found is None else (found[0], found[1], found[2])


def _preserved(db: sqlite3.Connection, sid: str) -> bool:
    found = db.execute("SELECT 1 FROM __agents_preserved WHERE session_id = ?", (sid,))
    return found.fetchone() is not None


def compact(
    db: sqlite3.Connection, sid: str, compaction: Compaction, clock: Clock
) -> CompactionResult:
    """Record a compaction: summary, window start and preservation in one transaction."""
    row = load_session(db, sid)
    number, start, _ = _latest(db, sid)
    check_compaction(sid, compaction, start, row.message_count)
    result = compaction_result(compaction, number + 1, _preserved(db, sid))
    db.execute(
        "INSERT INTO __agents_compactions (session_id, number, boundary, summary) "
        "VALUES (?, ?, ?, ?)",
        (
            sid,
            number + 1,
            compaction.boundary,
            dump_message_json(summary_row(compaction), sid),
        ),
    )
    if result.preserved:
        db.execute("INSERT OR IGNORE INTO __agents_preserved (session_id) VALUES (?)", (sid,))
    touch(db, row, clock)
    return result


def window(db: sqlite3.Connection, sid: str) -> ContextWindow:
    """The latest summary and the rows from the window start on (one read snapshot)."""
    row = load_session(db, sid)
    number, start, summary = _latest(db, sid)
    bodies = db.execute(
        "SELECT body FROM __agents_messages WHERE session_id = ? AND idx >= ? ORDER BY idx",
        (sid, max(start, row.first_index)),
    ).fetchall()
    summary_message = None if summary is None else ContextMessage.model_validate_json(summary)
    return ContextWindow(
        start=start,
        summary=summary_message,
        messages=tuple(parse_message_json(body) for (body,) in bodies),
        compactions=number,
        preserved=_preserved(db, sid),
    )


def history_hits(
    db: sqlite3.Connection, sid: str, grep: str | None, tool_name: str | None, limit: int
) -> list[HistoryHit]:
    """Up to ``limit`` hits, newest first: the live log, then the archive below it."""
    load_session(db, sid)
    # Rows whose JSON lacks a literal every match needs are skipped before parsing.
    params: dict[str, object] = {
        "grep": grep,
        "tool": tool_name,
        "sid": sid,
        "lit": None if grep is None else required_literal(grep),
        "name": tool_name if tool_name is not None and safe_literal(tool_name) else None,
    }
    hits: list[HistoryHit] = []
    for table, archived in (("__agents_messages", 0), ("__agents_archive", 1)):
        found = db.execute(
            f"SELECT hit FROM (SELECT helix_history_hit(:grep, :tool, body, idx, :archived) AS hit"
            f" FROM {table} WHERE session_id = :sid"
            f" AND (:lit IS NULL OR instr(body, :lit) > 0)"
            f" AND (:name IS NULL OR instr(body, :name) > 0)"
            f" ORDER BY idx DESC) WHERE hit IS NOT NULL LIMIT :n",
            {**params, "archived": archived, "n": limit - len(hits)},
        ).fetchall()
        hits.extend(_hit_json.validate_json(hit) for (hit,) in found)
        if len(hits) >= limit:
            break
    return hits


def archive_before(db: sqlite3.Connection, sid: str, first: int) -> None:
    """Copy the rows retention is about to drop into the archive, if history is preserved."""
    db.execute(
        "INSERT OR IGNORE INTO __agents_archive (session_id, idx, body) "
        "SELECT session_id, idx, body FROM __agents_messages "
        "WHERE session_id = ? AND idx < ? "
        "AND EXISTS (SELECT 1 FROM __agents_preserved WHERE session_id = ?)",
        (sid, first, sid),
    )


def forget_compactions(db: sqlite3.Connection, row: SessionRow, keep: int) -> None:
    """Drop the compactions a cut to ``keep`` rows made stale (CS-11)."""
    db.execute(
        "DELETE FROM __agents_compactions WHERE session_id = ? AND boundary > ?", (row.id, keep)
    )
