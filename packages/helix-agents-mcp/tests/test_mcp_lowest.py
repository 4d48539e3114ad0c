"""The adapter on the lowest ``mcp`` it declares (``mcp>=2.0``): its rules and the SDK's tests.

The newest release is the one in uv.lock, under every other test of this folder. Here
``uv run --with`` layers ``mcp`` 2.0.0 over the workspace's environment for one child
pytest run (the locked .venv is left as it is) on the memory backend.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
LOWEST = ("mcp==2.0.0", "mcp-types==2.0.0")


def _uv() -> str:
    uv = os.environ.get("UV") or shutil.which("uv") or str(ROOT / ".tools" / "bin" / "uv")
    assert Path(uv).exists() or shutil.which(uv), "uv is needed (make install provides it)"
    return uv


def _with_lowest(*args: str) -> subprocess.CompletedProcess[str]:
    pins = [arg for pin in LOWEST for arg in ("--with", pin)]
    return subprocess.run(
        [_uv(), "run", "--no-sync", *pins, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_lowest_mcp_passes_the_rules_and_the_sdk_tests() -> None:
    version = _with_lowest(
        "python", "-c", "import importlib.metadata as m; print(m.version('mcp'))"
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == "2.0.0"
    rules = _with_lowest(
        "pytest",
        str(HERE / "test_event_store.py"),
        "-k",
        "memory",
        "-q",
        "-p",
        "no:randomly",
    )
    assert rules.returncode == 0, rules.stdout[-3000:] + rules.stderr[-2000:]
    suite = _with_lowest("python", str(HERE / "sdk_suite" / "run_mcp_sdk_tests.py"), "memory")
    summary = suite.stdout.strip().splitlines()[-1] if suite.stdout.strip() else suite.stderr
    assert suite.returncode == 0, summary
    assert "mcp 2.0.0 " in summary and " 0 failed" in summary, summary
