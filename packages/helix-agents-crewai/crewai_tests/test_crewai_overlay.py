"""The environment these tests run in: the release of CrewAI asked for, with its own
``mcp<2``, over the workspace's core and stores (tests/test_crewai_env.py)."""

from __future__ import annotations

import importlib.metadata
import os
from pathlib import Path

import helix_agents.core
import helix_agents.crewai
import helix_agents.store_sqlite

ROOT = Path(__file__).resolve().parents[3]


def test_the_overlay_has_the_asked_crewai_its_mcp_and_the_workspace_core() -> None:
    expected = os.environ.get("CREWAI_EXPECTED_VERSION")
    if expected is not None:
        assert importlib.metadata.version("crewai") == expected
    assert int(importlib.metadata.version("mcp").split(".")[0]) < 2
    for module, package in (
        (helix_agents.core, "helix-agents-core"),
        (helix_agents.crewai, "helix-agents-crewai"),
        (helix_agents.store_sqlite, "helix-agents-store-sqlite"),
    ):
        assert Path(module.__file__ or "").is_relative_to(ROOT / "packages" / package)
