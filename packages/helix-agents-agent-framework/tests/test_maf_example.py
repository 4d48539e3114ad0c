"""examples/agent_framework_chat.py: two turns, a restored session, a refused race (MAF-11)."""

from __future__ import annotations

from pathlib import Path

from example_runs import run_example


def test_maf11_the_example_continues_after_a_restart_and_refuses_the_racing_run(
    tmp_path: Path,
) -> None:
    out = run_example("agent_framework_chat.py", tmp_path / "chat.db")
    assert out.splitlines() == [
        "weather in Paris -> It is sunny in Paris. (4 messages)",
        "weather in Lima -> It is sunny in Lima. (8 messages)",
        "restarting",
        # A new process, a new store object on the file, the session restored from its JSON.
        "what did I ask? -> You asked: weather in Paris; weather in Lima. (10 messages)",
        "second run refused: 10 rows expected, 14 found",
    ]
