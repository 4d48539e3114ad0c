"""The adapter on the lowest ``mcp`` it declares (``mcp>=2.0``): its rules and the SDK's tests.

Run on the memory backend in a child pytest with that release layered over the
workspace (``lowest``, contract_tests/support).
"""

from __future__ import annotations

from pathlib import Path

from lowest import run_with, version_with

HERE = Path(__file__).parent
LOWEST = ("mcp==2.0.0", "mcp-types==2.0.0")


def test_the_lowest_mcp_passes_the_rules_and_the_sdk_tests() -> None:
    assert version_with(LOWEST, "mcp") == "2.0.0"
    rules = run_with(
        LOWEST,
        "pytest",
        str(HERE / "test_event_store.py"),
        "-k",
        "memory",
        "-q",
        "-p",
        "no:randomly",
    )
    assert rules.returncode == 0, rules.stdout[-3000:] + rules.stderr[-2000:]
    suite = run_with(LOWEST, "python", str(HERE / "sdk_suite" / "run_mcp_sdk_tests.py"), "memory")
    summary = suite.stdout.strip().splitlines()[-1] if suite.stdout.strip() else suite.stderr
    assert suite.returncode == 0, summary
    assert "mcp 2.0.0 " in summary and " 0 failed" in summary, summary
