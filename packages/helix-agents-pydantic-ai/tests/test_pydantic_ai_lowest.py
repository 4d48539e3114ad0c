"""The adapter on the lowest ``pydantic-ai-slim`` it declares (``>=1.32``): its rules and example.

Run on the memory backend in a child pytest with that release layered over the
workspace (``lowest``, contract_tests/support).
"""

from __future__ import annotations

from pathlib import Path

from lowest import run_with, version_with

HERE = Path(__file__).parent
LOWEST = ("pydantic-ai-slim==1.32.0",)


def test_the_lowest_pydantic_ai_passes_the_rules_and_the_example() -> None:
    assert version_with(LOWEST, "pydantic-ai-slim") == "1.32.0"
    rules = run_with(
        LOWEST,
        "pytest",
        str(HERE / "test_pai_history.py"),
        str(HERE / "test_pai_example.py"),
        "-k",
        "memory or example",
        "-q",
        "-p",
        "no:randomly",
    )
    assert rules.returncode == 0, rules.stdout[-3000:] + rules.stderr[-2000:]
    assert " passed" in rules.stdout and "failed" not in rules.stdout, rules.stdout[-500:]
