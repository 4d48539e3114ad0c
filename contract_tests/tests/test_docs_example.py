"""The custom-store example of docs/contract.md runs the suite with one pytest command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helix_agents.contract import SessionStoreContract
from helix_agents.contract._base import needs, rule_tests

DOCS = Path(__file__).resolve().parents[2] / "docs" / "contract.md"


def _example(name: str) -> str:
    text = DOCS.read_text()
    match = re.search(
        rf"<!-- docs-example: {re.escape(name)} -->\n```python\n(.*?)```", text, re.DOTALL
    )
    assert match, f"docs/contract.md has no example {name}"
    return match.group(1)


def test_custom_store_example_runs_the_suite(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_my_store=_example("test_my_store.py"))
    result = pytester.runpytest_subprocess("test_my_store.py", "-q")
    # Every rule test and the state machine pass, but the rules needing retention skip.
    rules = rule_tests(SessionStoreContract).values()
    skipped = sum(1 for _, f in rules if "retention" in needs(f))
    result.assert_outcomes(passed=len(rules) + 1 - skipped, skipped=skipped)
