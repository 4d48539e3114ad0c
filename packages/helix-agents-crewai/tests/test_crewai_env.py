"""The CrewAI adapter's tests, in an environment with CrewAI (docs/integrations/crewai.md).

CrewAI pins ``mcp<2`` and the workspace's helix-agents-mcp needs ``mcp>=2``, so CrewAI is
not in the locked .venv. ``uv run --no-sync --with crewai==V --with-editable …`` layers it
(and this package, and core from the workspace) over that environment for one child
run; uv caches the layer, so the runs after the first start in seconds. The newest
release runs ``crewai_tests/`` whole (the rules, the example, CrewAI's own persistence
tests from its sdist) and then ``mypy --strict`` on the package; the lowest release it
declares runs the rules and the example.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from lowest import ROOT, uv_executable

HERE = Path(__file__).resolve().parents[1]
NEWEST = "1.15.30"
LOWEST = "1.13.0"  # the first release whose FlowPersistence is a pydantic model


def overlay(version: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``args`` run in the workspace's environment with ``crewai==version`` layered over it."""
    env = {
        **os.environ,
        # The workspace's logfire would load as a pydantic plugin beside CrewAI's older
        # OpenTelemetry; CrewAI's tracing and telemetry would reach for the network.
        "PYDANTIC_DISABLE_PLUGINS": "__all__",
        "CREWAI_TRACING_ENABLED": "false",
        "CREWAI_DISABLE_TELEMETRY": "true",
        "OTEL_SDK_DISABLED": "true",
        "CREWAI_EXPECTED_VERSION": version,
    }
    command = [
        uv_executable(),
        "run",
        "--no-sync",
        "--with",
        f"crewai=={version}",
        "--with-editable",
        str(ROOT / "packages" / "helix-agents-core"),
        "--with-editable",
        str(HERE),
        *args,
    ]
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200, check=False
    )


def child_pytest(version: str, *args: str) -> tuple[dict[str, int], str]:
    """The counts of a child pytest over ``crewai_tests/``; it must exit 0."""
    done = overlay(
        version,
        "python",
        "-m",
        "pytest",
        str(HERE / "crewai_tests"),
        "-q",
        "-p",
        "no:randomly",
        "-p",
        "no:logfire",
        # Importing crewai warns that it sets an attribute on its own package.
        "-W",
        "ignore:Cannot set an attribute:ImportWarning",
        *args,
    )
    tail = done.stdout[-4000:] + done.stderr[-2000:]
    assert done.returncode == 0, tail
    last = done.stdout.strip().splitlines()[-1]
    counts = {kind: int(n) for n, kind in re.findall(r"(\d+) (\w+)", last)}
    return counts, tail


def test_the_newest_crewai_passes_the_rules_the_example_and_its_sdk_suite() -> None:
    counts, tail = child_pytest(NEWEST)
    # 4 backends x the rules, the example on two, the overlay's check, CrewAI's own suite.
    assert counts.get("passed", 0) >= 140 and "failed" not in counts, tail
    assert counts.get("skipped", 0) == 0, tail
    checked = overlay(
        NEWEST,
        "python",
        "-m",
        "mypy",
        "--config-file",
        str(HERE / "pyproject.toml"),
    )
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-1000:]
    assert "Success: no issues found" in checked.stdout, checked.stdout


def test_the_lowest_crewai_passes_the_rules_and_the_example() -> None:
    counts, tail = child_pytest(LOWEST, "-k", "not sdk_suite")
    assert counts.get("passed", 0) >= 136 and "failed" not in counts, tail
