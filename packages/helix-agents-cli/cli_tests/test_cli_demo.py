"""``demo`` through the installed command: a session the other commands can show."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Helix


def test_demo_writes_a_session_to_try_the_commands_on(helix: Helix, tmp_path: Path) -> None:
    done = helix("demo", cwd=tmp_path)
    assert done.code == 0, done.err
    assert "helix-store show sqlite:///helix-demo.db demo-trip" in done.out
    url = f"sqlite:///{tmp_path / 'helix-demo.db'}"
    assert helix("demo", url).code == 0  # again: re-created, not refused
    shown = json.loads(helix("show", url, "demo-trip", "--json").out)
    # a delivered memory (row 1), a tool call with its offloaded result (rows 4, 5), the call
    # the pending approval holds back (row 7)
    assert [m["context"] for m in shown["messages"]] == [False, True] + [False] * 6
    assert "[Output stored as out-" in shown["messages"][5]["row"]["content"]
    assert shown["session"]["current_run"]["status"] == "awaiting_approval"
    assert "helix-store serve sqlite:///helix-demo.db" in done.out
