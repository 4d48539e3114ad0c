"""Run the OpenAI Agents SDK's own session tests against HelixSession on one or more backends.

``python run_sdk_tests.py [memory,sqlite,postgres,redis|all] [pytest args]``.

The tests come from the sdist of the installed ``openai-agents`` (``sdist_suite``,
contract_tests/support: fetched, checked and cached outside the repository);
``helix_sdk_plugin.py`` swaps the SDK's session classes for HelixSession and
``deselect.txt`` names what does not run and why. Prints one line of counts per
backend; the exit status is non-zero if any test failed.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE.parents[3] / "contract_tests" / "support"))

from sdist_suite import Suite  # noqa: E402

WHAT = "session tests on HelixSession"
SUITE = Suite(
    distribution="openai-agents",
    # The SDK's test files about sessions: everything they build is swapped or deselected.
    test_paths=("tests/memory", "tests/extensions/memory"),
    plugin="helix_sdk_plugin",
    plugin_dir=HERE,
    deselect=HERE / "deselect.txt",
    # Their session tests take no snapshots; its end-of-run parse of every test file at
    # times trips CPython 3.11's "AST constructor recursion depth mismatch" SystemError
    # (cf. gh-106905) and fails a green run.
    pytest_args=("--inline-snapshot=disable",),
)

if __name__ == "__main__":
    raise SystemExit(SUITE.main(WHAT, sys.argv[1:]))
