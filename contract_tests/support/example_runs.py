"""One run of a script of ``examples/`` as ``python`` runs it (warm_python.py): the
adapters' example tests."""

from __future__ import annotations

from pathlib import Path

from warm_python import run_python

EXAMPLES = Path(__file__).parents[2] / "examples"


def run_example(script: str, db: Path | str) -> str:
    """The output of ``examples/<script> <db>``, which must exit 0."""
    done = run_python([str(EXAMPLES / script), str(db)])
    assert done.returncode == 0, done.stderr
    return done.stdout
