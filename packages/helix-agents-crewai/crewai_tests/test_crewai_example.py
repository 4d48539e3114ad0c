"""examples/crewai_flow.py on SQLite and PostgreSQL: a pause, a decision from another
process (once), a restart that resumes from the saved state (CRW-4)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "crewai_flow.py"


def _run(store: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), store],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    # CrewAI's own console panels are left out: the example's lines are these.
    ours = ("paused", "waiting", "decide", "resumed", "state", "still")
    return [line for line in done.stdout.splitlines() if line.startswith(ours)]


def _check(lines: list[str]) -> None:
    paused, waiting, decided, again, resumed, state, pending = lines
    assert paused.startswith("paused at 'review': ")
    before = ast.literal_eval(paused.split(": ", 1)[1])
    assert before["steps"] == ["write", "review"] and before["text"]
    assert waiting == (
        "waiting: {'message': 'Publish this draft?', 'method_output': 'Helix keeps CrewAI flows'}"
    )
    assert (decided, again) == ("decide: resolved", "decide again: already-resolved")
    assert resumed == "resumed: published: Helix keeps CrewAI flows"
    after = ast.literal_eval(state.split(": ", 1)[1])
    assert after == {**before, "steps": ["write", "review", "publish (ship it)"]}
    assert pending == "still pending: []"


def test_crw4_the_example_on_sqlite(tmp_path: Path) -> None:
    _check(_run(str(tmp_path / "flows.db")))


def test_crw4_the_example_on_postgres(postgres_schema_url: str) -> None:
    _check(_run(postgres_schema_url))
