"""examples/adk_agent.py runs offline, keeps state in three scopes, and resumes from SQLite."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from example_runs import run_example

run = partial(run_example, "adk_agent.py")


def test_example_agent_with_a_tool_resumes_on_sqlite(tmp_path: Path) -> None:
    out = run(tmp_path / "agent.db")
    assert out.splitlines() == [
        "new session",
        "planner> Done: noted Lyon.",
        "planner> This is turn 2 of our talk.",
        "events: 6",
        "state destination = 'Lyon'",
        "state user:home_trips = 1",
        "state app:cities_seen = ['Lyon']",
        "bob sees app:cities_seen = ['Lyon']",
    ]
    # A second process resumes the session: its events, and state of every scope.
    again = run(tmp_path / "agent.db").splitlines()
    assert again[0] == "resumed session"
    assert "planner> This is turn 4 of our talk." in again
    assert "events: 12" in again and "state user:home_trips = 2" in again
