"""examples/long_run.py runs to the end and shows each step (so CI runs the example)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "long_run.py"


def test_long_run_example(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), str(tmp_path / "long.db")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "strategy dynamic: offload=True, preserve=True, lazy tools=True" in out
    assert "— 40,000 chars, 909 lines]" in out
    assert "612: tests/test_module_0612.py::test_refund FAILED" in out
    assert "[1 matching lines of 909]" in out
    assert "compaction 1: rows 0.." in out and "compaction 2: rows " in out
    assert "row 0 (user, archived) line 1: Note: the staging deploy token is XK-4471." in out
    assert "[error context_unknown_tool_source: there is no tool source 'gitlab'" in out
    assert "active sources: ['github']" in out
