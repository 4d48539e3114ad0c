"""The adapter on the lowest ``agent-framework-core`` it declares (``>=1.0``): the rules.

The newest release is the one in uv.lock, under every other test of this folder. Here
``uv run --with`` layers ``agent-framework-core`` 1.0.0 over the workspace's environment for
one child pytest run (the locked .venv is left as it is) on the framework's own provider
and ours on the memory backend. The example runs on the contract's calls (an agent on a
custom client, a serialized session), which MAF-4 and MAF-5 cover here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
LOWEST = "agent-framework-core==1.0.0"


def _uv() -> str:
    uv = os.environ.get("UV") or shutil.which("uv") or str(ROOT / ".tools" / "bin" / "uv")
    assert Path(uv).exists() or shutil.which(uv), "uv is needed (make install provides it)"
    return uv


def _with_lowest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_uv(), "run", "--no-sync", "--with", LOWEST, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_lowest_agent_framework_passes_the_contract_and_the_rules() -> None:
    version = _with_lowest(
        "python", "-c", "import importlib.metadata as m; print(m.version('agent-framework-core'))"
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == "1.0.0"
    rules = _with_lowest(
        "pytest",
        str(HERE / "test_maf_contract.py"),
        str(HERE / "test_maf_history.py"),
        "-k",
        "memory",
        "-q",
        "-p",
        "no:randomly",
    )
    assert rules.returncode == 0, rules.stdout[-3000:] + rules.stderr[-2000:]
    assert " passed" in rules.stdout and "failed" not in rules.stdout, rules.stdout[-500:]
    # MAF-6 is the one rule the framework's own provider did not keep before 1.15.
    assert "1 skipped" in rules.stdout, rules.stdout[-500:]
