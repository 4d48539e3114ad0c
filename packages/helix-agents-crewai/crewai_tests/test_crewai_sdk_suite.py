"""CrewAI's own flow persistence tests, run against HelixFlowPersistence.

See sdk_suite/run_crewai_sdk_tests.py: the tests come from the sdist of the installed
crewai (cached outside the repository), the ``SQLiteFlowPersistence`` they build is
swapped for ours by sdk_suite/helix_crewai_plugin.py, and sdk_suite/deselect.txt names
what does not run and why. On SQLite in `make test`, on all four in
`make frameworks-all` (``chosen_backends``).
"""

from __future__ import annotations

import pytest
from helix_fixtures import run_suite
from run_crewai_sdk_tests import SUITE, WHAT
from sdist_suite import chosen_backends


@pytest.mark.parametrize("backend", chosen_backends())
def test_the_sdk_suite_crewai_persistence_tests_pass_on_helix_flow_persistence(
    backend: str,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counts, summary = run_suite(SUITE, WHAT, backend, request, monkeypatch, capsys)
    # Not an empty run: the three files hold 82 tests at crewai 1.15.30, 51 of which
    # build a persistence (ours, swapped in).
    assert counts.get("passed", 0) >= 80, summary
    assert counts.get("on_helix", 0) >= 50, summary
