"""examples/langgraph_memory.py: a preference learned on one thread is recalled on another."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).parents[3] / "examples" / "langgraph_memory.py"


def check(url: str) -> None:
    """The example's two steps on ``url``, and what they print."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), url, "ada", "both"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "ada-monday: user: I like green tea",
        "remembered in ('users', 'ada', 'prefs'): green tea",
        "ada-monday: ai: You like green tea.",
        "memory of ada: [('drink', {'likes': 'green tea'})]",
        "ada-tuesday: user: What do I like to drink?",
        "ada-tuesday: ai: You like green tea.",
        "memory of ada: [('drink', {'likes': 'green tea'})]",
    ]


def test_a_preference_outlives_its_thread(tmp_path: Path) -> None:
    check(f"sqlite:///{tmp_path / 'memory.db'}")


def test_a_preference_outlives_its_thread_on_postgres(postgres_schema_url: str) -> None:
    check(postgres_schema_url)
