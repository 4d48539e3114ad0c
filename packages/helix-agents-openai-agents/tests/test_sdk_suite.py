"""The OpenAI Agents SDK's own session tests, run against HelixSession on each backend.

See sdk_suite/run_sdk_tests.py: the tests come from the sdist of the installed
SDK (cached outside the repository), the SDK's session classes are swapped for
HelixSession by sdk_suite/helix_sdk_plugin.py, and sdk_suite/deselect.txt names
what does not run and why. Each backend's counts are printed.
"""

from __future__ import annotations

import pytest
import run_sdk_tests
from helix_backends import BACKENDS
from helix_fixtures import found_server

from helix_agents.contract.servers import POSTGRES_ENV, REDIS_ENV


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_sdk_session_tests_pass_on_helix_session(
    backend: str,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = found_server(request, backend)
    if url is not None:  # the child run finds the session's server first, by its env URL
        monkeypatch.setenv(POSTGRES_ENV if backend == "postgres" else REDIS_ENV, url)
    counts = run_sdk_tests.run(backend, "-p", "no:randomly")
    summary = run_sdk_tests.describe(backend, counts)
    with capsys.disabled():
        print(f"\n{summary}")
    assert counts["exit"] == 0, summary
    assert counts.get("failed", 0) == 0, summary
    # Not an empty run: the session files hold about 470 tests that are not deselected.
    assert counts.get("passed", 0) >= 400, summary
