"""The MCP SDK's own streamable-HTTP and resumability tests, run against HelixEventStore.

See sdk_suite/run_mcp_sdk_tests.py: the tests come from the sdist of the installed SDK
(cached outside the repository), the event stores they build are swapped for
HelixEventStore by sdk_suite/helix_mcp_plugin.py, and sdk_suite/deselect.txt names what
does not run and why. Each backend's counts are printed. On SQLite in `make test`, on
all four in `make frameworks-all` (``chosen_backends``).
"""

from __future__ import annotations

import pytest
from helix_fixtures import run_suite
from run_mcp_sdk_tests import SUITE, WHAT
from sdist_suite import chosen_backends


@pytest.mark.parametrize("backend", chosen_backends())
def test_the_sdk_resumability_tests_pass_on_helix_event_store(
    backend: str,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counts, summary = run_suite(SUITE, WHAT, backend, request, monkeypatch, capsys)
    # Not an empty run: the four files hold about 90 tests that are not deselected, and
    # 15 of them build an event store (ours, swapped in).
    assert counts.get("passed", 0) >= 85, summary
    assert counts.get("on_helix", 0) >= 15, summary
