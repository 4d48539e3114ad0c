"""Commands in the workspace's environment with CrewAI layered over it (a release per run).

CrewAI pins ``mcp<2`` and the workspace's helix-agents-mcp needs ``mcp>=2``, so CrewAI is not
in the locked .venv (docs/integrations/crewai.md). ``uv run --no-sync --with crewai==V
--with-editable …`` adds it, helix-agents-crewai and core (editable, from the workspace:
uv resolves the ``--with`` requirements on their own) over that environment for one child
run; uv caches the layer, so each run after the first starts in seconds.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from lowest import ROOT, uv_executable

__all__ = ["LOWEST", "NEWEST", "USES_CREWAI", "overlay"]

NEWEST = "1.15.30"
"""The newest CrewAI release tested: the one the docs, the example and CrewAI's own tests use."""

LOWEST = "1.13.0"
"""The lowest release helix-agents-crewai declares: the first whose FlowPersistence is a
pydantic model (pending feedback is older, 1.8.0)."""

USES_CREWAI = (
    "import crewai",
    "from crewai",
    "from helix_agents.crewai",
    "import helix_agents.crewai",
)
"""How code that needs the overlay starts a line."""


def overlay(
    *args: str, version: str = NEWEST, cwd: Path = ROOT, timeout: float = 1200
) -> subprocess.CompletedProcess[str]:
    """``args`` run with ``crewai==version`` layered over the workspace's environment."""
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
        "--project",
        str(ROOT),
        "--with",
        f"crewai=={version}",
        "--with-editable",
        str(ROOT / "packages" / "helix-agents-core"),
        "--with-editable",
        str(ROOT / "packages" / "helix-agents-crewai"),
        *args,
    ]
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
