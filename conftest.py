"""Plugins of the repository's own runs: pytester for the suite's tests, the contract
plugin, which ends each run with the state machine's step counts, and the servers every
package's tests find the same way (CONTRIBUTING.md); and the event loop of every async
test. contract_tests/support (the adapters' stores on four backends, the frameworks' own
suites, lowest releases) goes on sys.path for every package's tests."""

import importlib.util
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "contract_tests" / "support"))

# logfire is in the dev environment only because the MCP SDK's own tests import it; its
# pydantic plugin would import logfire and OpenTelemetry into every Python process the
# tests start (each `helix-store` run, example and docs block: about a second each).
# No user of ours has it unless they add it, so the tests' processes run without it.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "logfire-plugin")

# CrewAI cannot be in the locked environment (it pins mcp<2): its adapter's tests run in an
# overlay with it (packages/helix-agents-crewai/tests/test_crewai_env.py), not here.
collect_ignore = (
    [] if importlib.util.find_spec("crewai") else ["packages/helix-agents-crewai/crewai_tests"]
)

pytest_plugins = [
    "pytester",
    "helix_agents.contract.plugin",
    "helix_agents.contract.servers.fixtures",
]


@pytest.fixture
def anyio_backend() -> str:
    """The stores run on asyncio: every package's async tests, one definition."""
    return "asyncio"
