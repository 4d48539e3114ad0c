"""One run of a script of ``examples/`` in a fresh interpreter: the adapters' example tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parents[2] / "examples"


def run_example(script: str, db: Path | str) -> str:
    """The output of ``examples/<script> <db>``, which must exit 0."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script), str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
