"""examples/pydantic_ai_chat.py: two turns, a restart that continues, a racing save (PAI-7)."""

from __future__ import annotations

from pathlib import Path

from example_runs import run_example


def test_pai7_the_example_continues_after_a_restart_and_refuses_the_racing_save(
    tmp_path: Path,
) -> None:
    out = run_example("pydantic_ai_chat.py", tmp_path / "chat.db")
    assert out.splitlines() == [
        "weather in Paris -> It is sunny in Paris. (4 messages)",
        "weather in Lima -> It is sunny in Lima. (8 messages)",
        "restarting",
        # A new process, a new store object on the file: the history is all there.
        "what did I ask? -> You asked: weather in Paris; weather in Lima. (10 messages)",
        "second save refused: 10 rows expected, 14 found",
    ]
