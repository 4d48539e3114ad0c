"""Stored tool outputs, pure: describing, reading back by range or grep, summarising."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from datetime import datetime

from ..errors import ValidationError
from ..inputs import check_id
from .models import OutputLine, OutputRef, OutputSlice
from .patterns import compile_pattern

__all__ = [
    "DEFAULT_MAX_CHARS",
    "MAX_CONTEXT_LINES",
    "MAX_OUTPUT_BYTES",
    "check_output_args",
    "check_read_args",
    "describe_output",
    "grep_lines",
    "new_output_id",
    "offload_summary",
    "read_lines",
    "split_lines",
]

DEFAULT_MAX_CHARS = 16_000
"""A read-back returns at most this many characters unless the caller asks otherwise."""
MAX_READ_CHARS = 1_000_000
MAX_CONTEXT_LINES = 50
MAX_OUTPUT_BYTES = 64 << 20
"""The largest output a store accepts, in bytes of UTF-8."""

HEAD_CHARS = 1_200
TAIL_CHARS = 600
HIGHLIGHTS = 8
HIGHLIGHT_CHARS = 240
# Lines an agent usually needs first in a long output: failures and warnings.
NOTABLE = (
    r"(?i)\b(error|errors|fail|failed|failure|fatal|exception|traceback|panic|"
    r"warn|warning|denied|refused|timeout|timed out|not found)\b"
)


def new_output_id() -> str:
    """A fresh output id: 122 random bits, so two stores never mint the same one."""
    return f"out-{uuid.uuid4().hex}"


def split_lines(text: str) -> list[str]:
    """The lines of ``text``: split on ``\\n``; a final newline ends the last line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def check_output_args(
    session_id: str, content: object, tool_name: object, key: object
) -> tuple[str, str | None, str | None]:
    """Validate what ``store_output`` takes; a :class:`ValidationError` names the bad value."""
    check_id(session_id, "session_id")
    if not isinstance(content, str):
        raise ValidationError(
            f"session {session_id!r}: output content must be a string, "
            f"got {type(content).__name__}",
            session_id=session_id,
        )
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValidationError(
            f"session {session_id!r}: output content is not valid Unicode (a lone surrogate)",
            session_id=session_id,
        ) from None
    if size > MAX_OUTPUT_BYTES:
        raise ValidationError(
            f"session {session_id!r}: output of {size} bytes is larger than {MAX_OUTPUT_BYTES}",
            session_id=session_id,
        )
    name = None if tool_name is None else check_id(tool_name, "tool_name", session_id=session_id)
    caller_key = None if key is None else check_id(key, "key", session_id=session_id)
    return content, name, caller_key


def check_read_args(
    session_id: str, output_id: object, max_chars: object, context_lines: object = 0
) -> str:
    """Validate an output id, ``max_chars`` (1..1,000,000) and ``context_lines`` (0..50)."""
    check_id(session_id, "session_id")
    oid = check_id(output_id, "output_id", session_id=session_id)
    for name, value, high in (
        ("max_chars", max_chars, MAX_READ_CHARS),
        ("context_lines", context_lines, MAX_CONTEXT_LINES),
    ):
        low = 1 if name == "max_chars" else 0
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValidationError(
                f"session {session_id!r}: {name} {value!r} is outside {low}..{high}",
                session_id=session_id,
            )
    return oid


def describe_output(
    content: str,
    *,
    output_id: str,
    created_at: datetime,
    tool_name: str | None = None,
    key: str | None = None,
) -> OutputRef:
    """The reference every backend stores beside ``content``: counts, digest and previews."""
    lines = split_lines(content)
    return OutputRef(
        output_id=output_id,
        key=key,
        tool_name=tool_name,
        chars=len(content),
        lines=len(lines),
        sha256=hashlib.sha256(content.encode("utf-8")).hexdigest(),
        head=_head(lines),
        tail=_tail(lines),
        highlights=_highlights(lines),
        created_at=created_at,
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}…"


def _head(lines: Sequence[str]) -> tuple[OutputLine, ...]:
    taken: list[OutputLine] = []
    used = 0
    for number, text in enumerate(lines, 1):
        if used >= HEAD_CHARS:
            break
        taken.append(OutputLine(number=number, text=_clip(text, HEAD_CHARS - used)))
        used += len(text) + 1
    return tuple(taken)


def _tail(lines: Sequence[str]) -> tuple[OutputLine, ...]:
    total = sum(len(text) + 1 for text in lines)
    if total <= HEAD_CHARS + TAIL_CHARS:
        return ()  # the head already shows everything worth showing
    taken: list[OutputLine] = []
    used = 0
    for number in range(len(lines), 0, -1):
        text = lines[number - 1]
        if used >= TAIL_CHARS:
            break
        taken.append(OutputLine(number=number, text=_clip(text, TAIL_CHARS - used)))
        used += len(text) + 1
    taken.reverse()
    return tuple(taken)


def _highlights(lines: Sequence[str]) -> tuple[OutputLine, ...]:
    notable = compile_pattern(NOTABLE)
    found: list[OutputLine] = []
    for number, text in enumerate(lines, 1):
        if notable.search(text):
            found.append(OutputLine(number=number, text=_clip(text, HIGHLIGHT_CHARS), match=True))
            if len(found) == HIGHLIGHTS:
                break
    return tuple(found)


def offload_summary(ref: OutputRef, *, tool: str = "read_tool_output") -> str:
    """The text that replaces an offloaded output in the conversation, built from ``ref`` alone.

    A header with the stored id, exact characters and lines; the head and tail
    previews with line numbers; the first lines that look like errors or
    warnings wherever they are; and how to read the rest.
    """
    parts = [f"[Output stored as {ref.output_id} — {ref.chars:,} chars, {ref.lines:,} lines]"]
    if ref.head:
        parts.append(f"Head (lines {ref.head[0].number}-{ref.head[-1].number}):")
        parts.extend(f"{ln.number}: {ln.text}" for ln in ref.head)
    if ref.tail:
        parts.append(f"Tail (lines {ref.tail[0].number}-{ref.tail[-1].number}):")
        parts.extend(f"{ln.number}: {ln.text}" for ln in ref.tail)
    if ref.highlights:
        parts.append("Notable lines (errors, warnings, failures):")
        parts.extend(f"{ln.number}: {ln.text}" for ln in ref.highlights)
    parts.append(
        f'Use {tool}("{ref.output_id}", start_line=N, end_line=M) to read lines, or '
        f'{tool}("{ref.output_id}", grep="pattern") to search (RE2 syntax; '
        f"each answer is capped at {DEFAULT_MAX_CHARS:,} characters)."
    )
    return "\n".join(parts)


def read_lines(
    output_id: str,
    content: str,
    *,
    session_id: str,
    start_line: object = 1,
    end_line: object = None,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> OutputSlice:
    """Lines ``start_line..end_line`` (1-based, inclusive) of ``content``, cut to ``max_chars``."""
    lines = split_lines(content)
    total = len(lines)
    start = _line_arg(session_id, "start_line", start_line, total)
    end = total if end_line is None else _line_arg(session_id, "end_line", end_line, total)
    if end < start:
        raise ValidationError(
            f"session {session_id!r}: end_line {end} is before start_line {start}",
            session_id=session_id,
        )
    taken, cut, cut_at = _fit(lines, range(start, end + 1) if total else (), (), max_chars)
    shown = f"lines {start}-{taken[-1].number}" if taken else "no lines"
    if cut:
        go_on = f" — continue with start_line={cut_at}" if cut_at is not None else ""
        note = f"{shown} of {total}; cut at {max_chars:,} characters{go_on}"
    else:
        note = f"{shown} of {total}" if total else "the output is empty"
    return OutputSlice(
        output_id=output_id,
        lines=tuple(taken),
        total_lines=total,
        total_chars=len(content),
        truncated=cut,
        next_line=cut_at,
        note=note,
    )


def _line_arg(session_id: str, name: str, value: object, total: int) -> int:
    high = max(total, 1)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        raise ValidationError(
            f"session {session_id!r}: {name} {value!r} is outside 1..{high} "
            f"(the output has {total} lines)",
            session_id=session_id,
        )
    return value


def _fit(
    lines: Sequence[str], numbers: Sequence[int], hits: Sequence[int], max_chars: int
) -> tuple[list[OutputLine], bool, int | None]:
    """The lines ``numbers`` until ``max_chars`` is spent: (lines, cut, line to go on from)."""
    hit_set = set(hits)
    taken: list[OutputLine] = []
    used = 0
    for position, number in enumerate(numbers):
        text = lines[number - 1]
        room = max_chars - used
        if len(text) > room:
            if taken:
                return taken, True, number
            # A single line longer than the cap: show what fits rather than nothing.
            taken.append(OutputLine(number=number, text=text[:room], match=number in hit_set))
            more = position + 1 < len(numbers)
            return taken, True, numbers[position + 1] if more else None
        taken.append(OutputLine(number=number, text=text, match=number in hit_set))
        used += len(text) + 1
    return taken, False, None


def grep_lines(
    output_id: str,
    content: str,
    pattern: object,
    *,
    session_id: str,
    context_lines: int = 2,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> OutputSlice:
    """Lines of ``content`` matching ``pattern`` (RE2), each with ``context_lines`` around it."""
    regex = compile_pattern(pattern, session_id=session_id)
    lines = split_lines(content)
    hits = [number for number, text in enumerate(lines, 1) if regex.search(text)]
    wanted: list[int] = []
    last = 0
    for number in hits:
        for shown in range(max(number - context_lines, last + 1), number + context_lines + 1):
            if shown <= len(lines):
                wanted.append(shown)
                last = shown
    taken, cut, cut_at = _fit(lines, wanted, hits, max_chars)
    shown_hits = sum(ln.match for ln in taken)
    if not hits:
        note = f"no line of {len(lines)} matches {pattern!r}"
    elif cut:
        note = (
            f"{len(hits)} matching lines; showing {shown_hits}, cut at {max_chars:,} characters "
            f"— narrow the pattern or read on from line {cut_at or taken[-1].number}"
        )
    else:
        note = f"{len(hits)} matching lines of {len(lines)}"
    return OutputSlice(
        output_id=output_id,
        lines=tuple(taken),
        total_lines=len(lines),
        total_chars=len(content),
        matches=len(hits),
        truncated=cut,
        next_line=cut_at,
        note=note,
    )
