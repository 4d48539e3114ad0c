"""Run CrewAI's own flow persistence tests against HelixFlowPersistence on one or more backends.

``python run_crewai_sdk_tests.py [memory,sqlite,postgres,redis|all] [pytest args]``, in the
crewai overlay (tests/test_crewai_env.py). The tests come from the sdist of the installed
``crewai`` (``sdist_suite``, contract_tests/support: fetched, checked and cached outside
the repository); ``helix_crewai_plugin.py`` swaps the ``SQLiteFlowPersistence`` they build
for HelixFlowPersistence and ``deselect.txt`` names what does not run and why. Prints one
line of counts per backend; the exit status is non-zero if any test failed.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE.parents[3] / "contract_tests" / "support"))

from sdist_suite import Suite  # noqa: E402

WHAT = "flow persistence tests on HelixFlowPersistence"
SUITE = Suite(
    distribution="crewai",
    # The sdist's test files that persist flows: the persistence tests, the async human
    # feedback ones (pending feedback saved, loaded, resumed) and the resumability ones.
    test_paths=(
        "tests/test_flow_persistence.py",
        "tests/test_async_human_feedback.py",
        "tests/test_flow_resumability_regression.py",
    ),
    plugin="helix_crewai_plugin",
    plugin_dir=HERE,
    deselect=HERE / "deselect.txt",
    pytest_args=(
        # The monorepo's pytest configuration is not in the sdist: their async tests run
        # on pytest-asyncio (in the workspace for the OpenAI SDK's tests), in auto mode.
        "-p",
        "asyncio",
        "-o",
        "asyncio_mode=auto",
        "-o",
        "asyncio_default_fixture_loop_scope=function",
        "-p",
        "no:logfire",
        "-p",
        "no:randomly",
        "-W",
        "ignore::DeprecationWarning",
    ),
)

if __name__ == "__main__":
    raise SystemExit(SUITE.main(WHAT, sys.argv[1:]))
