"""The opt-in plugin runs the whole suite by URL, and nothing runs without it."""

from __future__ import annotations

import pytest

from helix_agents.contract import SessionStoreContract
from helix_agents.contract._base import rule_tests


@pytest.mark.parametrize("scheme", ["memory", "sqlite"])
def test_plugin_runs_suite_by_url(pytester: pytest.Pytester, scheme: str) -> None:
    url = "memory://plugin-run" if scheme == "memory" else f"sqlite:///{pytester.path}/plugin.db"
    result = pytester.runpytest_subprocess(
        "-p", "helix_agents.contract.plugin", "--store-url", url, "-q"
    )
    # Every rule test, plus the state machine.
    result.assert_outcomes(passed=len(rule_tests(SessionStoreContract)) + 1)


def test_plugin_without_url_collects_nothing(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("-p", "helix_agents.contract.plugin", "-q")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_suite_not_auto_loaded(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_other="def test_nothing():\n    assert True\n")
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(passed=1)
