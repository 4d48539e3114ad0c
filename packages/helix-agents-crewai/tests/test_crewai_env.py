"""The CrewAI adapter's tests, in the crewai overlay (``crewai_overlay``, contract_tests/support).

CrewAI is not in the locked .venv (it pins ``mcp<2``; docs/integrations/crewai.md). The newest
release runs ``crewai_tests/`` whole (the rules, the example, CrewAI's own persistence
tests from its sdist) and then ``mypy --strict`` on the package; the lowest release it
declares runs the rules and the example.
"""

from __future__ import annotations

import re
from pathlib import Path

from crewai_overlay import LOWEST, NEWEST, overlay

HERE = Path(__file__).resolve().parents[1]


def child_pytest(version: str, *args: str) -> tuple[dict[str, int], str]:
    """The counts of a child pytest over ``crewai_tests/``; it must exit 0."""
    done = overlay(
        "python",
        "-m",
        "pytest",
        str(HERE / "crewai_tests"),
        "-q",
        "-p",
        "no:randomly",
        "-p",
        "no:logfire",
        # Importing crewai warns that it sets an attribute on its own package.
        "-W",
        "ignore:Cannot set an attribute:ImportWarning",
        *args,
        version=version,
    )
    tail = done.stdout[-4000:] + done.stderr[-2000:]
    assert done.returncode == 0, tail
    last = done.stdout.strip().splitlines()[-1]
    counts = {kind: int(n) for n, kind in re.findall(r"(\d+) (\w+)", last)}
    return counts, tail


def test_the_newest_crewai_passes_the_rules_the_example_and_its_sdk_suite() -> None:
    counts, tail = child_pytest(NEWEST)
    # The rules on 4 backends (140, and 2 of one backend), the deadline test, the example on
    # two, the overlay's check, CrewAI's own suite (one test per backend chosen; its own
    # counts are checked).
    assert counts.get("passed", 0) >= 147 and "failed" not in counts, tail
    assert counts.get("skipped", 0) == 0, tail
    checked = overlay("python", "-m", "mypy", "--config-file", str(HERE / "pyproject.toml"))
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-1000:]
    assert "Success: no issues found" in checked.stdout, checked.stdout


def test_the_lowest_crewai_passes_the_rules_and_the_example() -> None:
    # The example on SQLite only: on PostgreSQL it adds 20 s and nothing release-specific.
    counts, tail = child_pytest(LOWEST, "-k", "not sdk_suite and not example_on_postgres")
    assert counts.get("passed", 0) >= 145 and "failed" not in counts, tail
    assert counts.get("skipped", 0) == 0, tail
