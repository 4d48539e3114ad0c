"""Plugins of the repository's own runs: pytester for the suite's tests, the contract
plugin, which ends each run with the state machine's step counts, and the servers every
package's tests find the same way (CONTRIBUTING.md); and the event loop of every async
test. contract_tests/support (the adapters' stores on four backends, the frameworks' own
suites, lowest releases) goes on sys.path for every package's tests."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "contract_tests" / "support"))

pytest_plugins = [
    "pytester",
    "helix_agents.contract.plugin",
    "helix_agents.contract.servers.fixtures",
]


@pytest.fixture
def anyio_backend() -> str:
    """The stores run on asyncio: every package's async tests, one definition."""
    return "asyncio"
