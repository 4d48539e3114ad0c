"""examples/openai_agents_chat.py runs offline and keeps the conversation across runs."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from example_runs import run_example

run = partial(run_example, "openai_agents_chat.py")


def test_example_chat_with_a_tool_on_sqlite(tmp_path: Path) -> None:
    out = run(tmp_path / "chat.db")
    assert "agent> It is sunny and 21 °C in Paris." in out
    assert "the first was 'What is the weather in Paris?'" in out
    roles = [line.split() for line in out.splitlines() if line.startswith("  ")]
    assert roles == [
        ["user", "message"],
        ["assistant", "function_call"],
        ["tool", "function_call_output"],
        ["assistant", "message"],
        ["user", "message"],
        ["assistant", "message"],
    ]
    assert "ada's session ada-weather-chat: 6 rows" in out
    # A second run continues the same session from the file.
    again = run(tmp_path / "chat.db")
    assert "You have asked me 4 things" in again
    assert "ada's session ada-weather-chat: 12 rows" in again
