"""The OpenAI Agents SDK's own session tests, run against HelixSession on each backend.

See sdk_suite/run_sdk_tests.py: the tests come from the sdist of the installed
SDK (cached outside the repository), the SDK's session classes are swapped for
HelixSession by sdk_suite/helix_sdk_plugin.py, and sdk_suite/deselect.txt names
what does not run and why. Each backend's counts are printed. On SQLite in `make test`,
on all four in `make frameworks-all` (``chosen_backends``).
"""

from __future__ import annotations

import pytest
from helix_fixtures import run_suite
from run_sdk_tests import SUITE, WHAT
from sdist_suite import chosen_backends


@pytest.mark.parametrize("backend", chosen_backends())
def test_the_sdk_session_tests_pass_on_helix_session(
    backend: str,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counts, summary = run_suite(SUITE, WHAT, backend, request, monkeypatch, capsys)
    # Not an empty run: the session files hold about 470 tests that are not deselected.
    assert counts.get("passed", 0) >= 400, summary
