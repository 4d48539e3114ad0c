"""The adapter on the lowest ``agent-framework-core`` it declares (``>=1.0``): the rules.

Run on the framework's own provider and ours on the memory backend in a child pytest with
that release layered over the workspace (``lowest``, contract_tests/support). The example
runs on the contract's calls (an agent on a custom client, a serialized session), which
MAF-4 and MAF-5 cover here.
"""

from __future__ import annotations

from pathlib import Path

from lowest import run_with, version_with

HERE = Path(__file__).parent
LOWEST = ("agent-framework-core==1.0.0",)


def test_the_lowest_agent_framework_passes_the_contract_and_the_rules() -> None:
    assert version_with(LOWEST, "agent-framework-core") == "1.0.0"
    rules = run_with(
        LOWEST,
        "pytest",
        str(HERE / "test_maf_contract.py"),
        str(HERE / "test_maf_history.py"),
        "-k",
        "memory",
        "-q",
        "-p",
        "no:randomly",
    )
    assert rules.returncode == 0, rules.stdout[-3000:] + rules.stderr[-2000:]
    assert " passed" in rules.stdout and "failed" not in rules.stdout, rules.stdout[-500:]
    # MAF-6 is the one rule the framework's own provider did not keep before 1.15.
    assert "1 skipped" in rules.stdout, rules.stdout[-500:]
