"""An adapter's tests on the lowest release of its framework that it declares.

The newest release is the one in uv.lock, under every other test. ``uv run --with``
layers the lowest one over the workspace's environment for one child run (the locked
.venv is left as it is); the nox sessions ``*_lowest`` do the same for a whole folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

__all__ = ["ROOT", "run_with", "uv_executable", "version_with"]

ROOT = Path(__file__).resolve().parents[2]


def uv_executable() -> str:
    """The uv that runs the workspace: ``$UV``, on PATH, or make's copy in .tools."""
    uv = os.environ.get("UV") or shutil.which("uv") or str(ROOT / ".tools" / "bin" / "uv")
    assert Path(uv).exists() or shutil.which(uv), "uv is needed (make install provides it)"
    return uv


def run_with(pins: Sequence[str], *args: str) -> subprocess.CompletedProcess[str]:
    """``args`` run in the workspace's environment with ``pins`` layered over it."""
    with_pins = [arg for pin in pins for arg in ("--with", pin)]
    return subprocess.run(
        [uv_executable(), "run", "--no-sync", *with_pins, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def version_with(pins: Sequence[str], distribution: str) -> str:
    """The version of ``distribution`` that a run with ``pins`` imports."""
    code = f"import importlib.metadata as m; print(m.version({distribution!r}))"
    found = run_with(pins, "python", "-c", code)
    assert found.returncode == 0, found.stderr
    return found.stdout.strip()
