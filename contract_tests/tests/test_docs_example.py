"""The custom-store example of docs/contract.md runs the suite with one pytest command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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
    result.assert_outcomes(passed=100, skipped=3)
    result.stdout.fnmatch_lines(["*100 passed, 3 skipped*"])
