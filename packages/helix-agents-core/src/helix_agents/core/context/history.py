"""Compaction and history search, pure: the checks and the matching every backend shares."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..errors import ConcurrencyConflictError, ValidationError
from ..inputs import check_id
from ..messages import ContextMessage, Message
from .literals import required_literal
from .models import Compaction, CompactionResult, HistoryHit, HistorySearch
from .patterns import Pattern, compile_pattern
from .strategy import features

__all__ = [
    "MAX_HISTORY_LIMIT",
    "HistoryQuery",
    "check_compaction",
    "compaction_result",
    "row_text",
    "row_tool_names",
    "search_result",
    "search_rows",
    "summary_row",
]

MAX_HISTORY_LIMIT = 200
"""The most rows one history search returns."""
MAX_LINE_CHARS = 500


Row: TypeAlias = Message | Mapping[str, Any]
"""A row, or its JSON object (as stored): both give the same text and tool names."""


def _fields(row: Row) -> tuple[Any, Any, Any, Any]:
    """``(role, content, tool_calls, name)`` of a row or of its JSON object."""
    if type(row) is dict or isinstance(row, Mapping):
        return row.get("role"), row.get("content"), row.get("tool_calls"), row.get("name")
    if isinstance(row, ContextMessage):
        return "context", row.content, None, None
    extra = row.model_extra or {}
    return row.role, row.content, extra.get("tool_calls"), extra.get("name")


def row_text(row: Row) -> str:
    """The text a history search looks in: content, text parts, and tool calls with arguments."""
    return _text(*_fields(row))


def _text(role: Any, content: Any, calls: Any, name: Any) -> str:
    if role == "context":
        return content if isinstance(content, str) else ""
    parts: list[str] = []
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        parts.extend(
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    for name, arguments in _calls(calls):
        parts.append(f"{name}({arguments})")
    return "\n".join(parts)


def _calls(calls: Any) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if isinstance(calls, list):
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                arguments = function.get("arguments")
                found.append((function["name"], arguments if isinstance(arguments, str) else ""))
    return found


def row_tool_names(row: Row) -> list[str]:
    """The tools a row is about: the calls of a chat row, the ``name`` of a tool row."""
    return _names(*_fields(row))


def _names(role: Any, content: Any, calls: Any, name: Any) -> list[str]:
    if role == "context":
        return []
    if role == "tool":
        return [name] if isinstance(name, str) else []
    return [call_name for call_name, _ in _calls(calls)]


@dataclass(frozen=True, slots=True)
class HistoryQuery:
    """A validated ``search_history`` call; :meth:`hit` matches one stored row."""

    regex: Pattern | None
    tool_name: str | None
    limit: int
    # ``regex`` in multi-line mode: one search over a row's whole text that every
    # row with a matching line passes (None when \\A or \\z would make that false).
    whole: Pattern | None = None
    # A substring every matching line contains (see literals.py): the cheapest test first.
    literal: str | None = None

    @classmethod
    def matching(cls, pattern: str | None, tool_name: str | None, limit: int = 1) -> HistoryQuery:
        """The query of an already checked pattern and tool name (what a store function gets)."""
        if pattern is None:
            return cls(None, tool_name, limit)
        whole = None
        if "\\A" not in pattern and "\\z" not in pattern:
            whole = compile_pattern(f"(?m){pattern}")
        return cls(compile_pattern(pattern), tool_name, limit, whole, required_literal(pattern))

    @classmethod
    def build(cls, session_id: str, grep: object, tool_name: object, limit: object) -> HistoryQuery:
        """Check the arguments: at least one filter, ``limit`` in 1..200, a valid pattern."""
        check_id(session_id, "session_id")
        if isinstance(limit, bool) or not isinstance(limit, int):
            limit = -1
        if not 1 <= limit <= MAX_HISTORY_LIMIT:
            raise ValidationError(
                f"session {session_id!r}: limit is outside 1..{MAX_HISTORY_LIMIT}",
                session_id=session_id,
            )
        if grep is None and tool_name is None:
            raise ValidationError(
                f"session {session_id!r}: search_history needs grep, tool_name or both",
                session_id=session_id,
            )
        if grep is not None:
            compile_pattern(grep, session_id=session_id)
        name = None
        if tool_name is not None:
            name = check_id(tool_name, "tool_name", session_id=session_id)
        return cls.matching(grep if grep is None else str(grep), name, limit)

    def hit(self, index: int, body: str | Row, *, archived: bool) -> HistoryHit | None:
        """The hit for the row at ``index`` (JSON text, object or row); ``None`` if no match."""
        fields = _fields(json.loads(body) if isinstance(body, str) else body)
        if self.tool_name is not None and self.tool_name not in _names(*fields):
            return None
        text = _text(*fields)
        if self.literal is not None and self.literal not in text:
            return None
        if self.whole is not None and not self.whole.search(text):
            return None  # one search of the whole text rules most rows out at once
        lines = text.split("\n")
        number = 1
        if self.regex is not None:
            regex = self.regex
            found = next((n for n, text in enumerate(lines, 1) if regex.search(text)), None)
            if found is None:
                return None
            number = found
        line = lines[number - 1]
        names = _names(*fields)
        return HistoryHit(
            index=index,
            role=fields[0],
            tool_name=names[0] if names else None,
            line_number=number,
            line=line if len(line) <= MAX_LINE_CHARS else f"{line[:MAX_LINE_CHARS]}…",
            archived=archived,
        )


def search_result(query: HistoryQuery, hits: Iterable[HistoryHit]) -> HistorySearch:
    """Up to ``query.limit`` hits (given newest first, one more to detect a cut)."""
    found = list(hits)
    cut = len(found) > query.limit
    del found[query.limit :]
    if not found:
        note = "no row matches (the archive and the live log were both searched)"
    elif cut:
        note = f"first {query.limit} hits, newest first; more rows match — narrow the search"
    else:
        note = f"{len(found)} {'hit' if len(found) == 1 else 'hits'}, newest first"
    return HistorySearch(hits=tuple(found), truncated=cut, note=note)


def search_rows(
    query: HistoryQuery,
    first_index: int,
    live: Sequence[str | Row],
    archive: Sequence[tuple[int, str | Row]],
) -> HistorySearch:
    """The search over rows held in memory: ``live`` rows from ``first_index`` on, then the
    ``(index, row)`` pairs retention archived, both newest first (CS-10)."""
    return search_result(query, _hits(query, first_index, live, archive))


def _hits(
    query: HistoryQuery,
    first_index: int,
    live: Sequence[str | Row],
    archive: Sequence[tuple[int, str | Row]],
) -> Iterator[HistoryHit]:
    """Matching rows, newest first; stops one past the limit."""
    newest_first = itertools.chain(
        ((first_index + i, live[i], False) for i in range(len(live) - 1, -1, -1)),
        ((index, row, True) for index, row in reversed(archive)),
    )
    found = 0
    for index, row, archived in newest_first:
        hit = query.hit(index, row, archived=archived)
        if hit is not None:
            yield hit
            found += 1
            if found > query.limit:
                return


def check_compaction(
    session_id: str, compaction: Compaction, window_start: int, message_count: int
) -> None:
    """Refuse a compaction that cannot land: a stale start, or a boundary outside the window."""
    expected = compaction.expect_window_start
    if expected is not None and expected != window_start:
        raise ConcurrencyConflictError(
            f"session {session_id!r}: expected the window to start at {expected}, "
            f"it starts at {window_start}",
            session_id=session_id,
        )
    if not window_start < compaction.boundary <= message_count:
        raise ValidationError(
            f"session {session_id!r}: compaction boundary {compaction.boundary} is outside "
            f"{window_start + 1}..{message_count} (the window starts at {window_start})",
            session_id=session_id,
        )


def summary_row(compaction: Compaction) -> ContextMessage:
    """The context row that stands for the rows before the compaction's boundary."""
    return ContextMessage(
        kind="memory",
        content=compaction.summary,
        memory_ids=[],
        source="compaction",
        metadata={"boundary": compaction.boundary},
    )


def compaction_result(
    compaction: Compaction, number: int, preserved_before: bool
) -> CompactionResult:
    """What recording ``compaction`` as the session's ``number``-th leaves."""
    preserved = preserved_before or features(compaction.strategy).preserve_history
    return CompactionResult(
        window_start=compaction.boundary, compactions=number, preserved=preserved
    )
