"""Output references, read-back by range and by grep, and the offload summary."""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime

import pytest

from helix_agents.core import ValidationError
from helix_agents.core.context import (
    InvalidPatternError,
    describe_output,
    grep_lines,
    offload_summary,
    read_lines,
    split_lines,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def big_output() -> str:
    lines = [f"line {i}: compiling module_{i}.c ok" for i in range(1, 1201)]
    lines[700] = "line 701: ERROR undefined reference to `frobnicate'"
    return "\n".join(lines) + "\n"


def test_CS_16_reference_counts_are_exact() -> None:
    text = big_output()
    ref = describe_output(text, output_id="o1", created_at=NOW, tool_name="make")
    assert ref.chars == len(text)
    assert ref.lines == 1200 == len(split_lines(text))
    assert ref.sha256 == hashlib.sha256(text.encode()).hexdigest()
    assert split_lines("a\nb") == ["a", "b"] and split_lines("") == [] and split_lines("\n") == [""]


def test_CS_16_summary_shows_where_the_error_is() -> None:
    """The preview limit: a head and tail alone would miss line 701."""
    ref = describe_output(big_output(), output_id="o1", created_at=NOW)
    summary = offload_summary(ref)
    assert summary.startswith("[Output stored as o1 — ")
    assert f"{ref.chars:,} chars, 1,200 lines" in summary
    assert "701: line 701: ERROR undefined reference" in summary
    assert "1200: line 1200" in summary and "1: line 1:" in summary
    assert 'read_tool_output("o1", grep="pattern")' in summary


def test_CS_16_read_range_and_cap() -> None:
    text = big_output()
    part = read_lines("o1", text, session_id="s", start_line=10, end_line=12)
    assert [ln.number for ln in part.lines] == [10, 11, 12] and not part.truncated
    whole = read_lines("o1", text, session_id="s")
    assert whole.truncated and whole.next_line is not None
    assert sum(len(ln.text) + 1 for ln in whole.lines) <= 16_000
    assert "cut at 16,000 characters" in whole.note
    rest = read_lines("o1", text, session_id="s", start_line=whole.next_line)
    assert rest.lines[0].number == whole.lines[-1].number + 1
    with pytest.raises(ValidationError):
        read_lines("o1", text, session_id="s", start_line=5000)


def test_CS_16_one_huge_line_is_cut_not_hidden() -> None:
    part = read_lines("o1", "x" * 50_000, session_id="s", max_chars=100)
    assert part.truncated and part.lines[0].text == "x" * 100


def test_CS_16_grep_with_context_and_cap() -> None:
    text = big_output()
    found = grep_lines("o1", text, r"ERROR|line 1200:", session_id="s", context_lines=1)
    assert [(ln.number, ln.match) for ln in found.lines] == [
        (700, False),
        (701, True),
        (702, False),
        (1199, False),
        (1200, True),
    ]
    assert found.matches == 2 and not found.truncated
    many = grep_lines("o1", text, "ok", session_id="s", max_chars=2_000)
    assert many.truncated and many.matches == 1199 and "cut at 2,000" in many.note
    none = grep_lines("o1", text, "nothing-like-this", session_id="s")
    assert none.matches == 0 and none.lines == () and "no line" in none.note


def test_CS_16_bad_and_hostile_patterns() -> None:
    with pytest.raises(InvalidPatternError) as caught:
        grep_lines("o1", "aaa", r"(a)\1", session_id="s")
    assert caught.value.code == "context_invalid_pattern"
    with pytest.raises(InvalidPatternError):
        grep_lines("o1", "aaa", "", session_id="s")
    start = time.perf_counter()
    grep_lines("o1", "a" * 200_000 + "!", r"(a+)+$", session_id="s")
    assert time.perf_counter() - start < 1.0
