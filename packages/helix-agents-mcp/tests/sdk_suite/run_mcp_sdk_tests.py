"""Run the MCP SDK's own resumability tests against HelixEventStore on one or more backends.

``python run_mcp_sdk_tests.py [memory,sqlite,postgres,redis|all] [pytest args]``.

The tests come from the sdist of the installed ``mcp`` (``sdist_suite``,
contract_tests/support: fetched, checked and cached outside the repository);
``helix_mcp_plugin.py`` swaps the event stores those tests build for HelixEventStore and
``deselect.txt`` names what does not run and why. Prints one line of counts per backend;
the exit status is non-zero if any test failed.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE.parents[3] / "contract_tests" / "support"))

from sdist_suite import Suite  # noqa: E402

WHAT = "streamable-HTTP tests on HelixEventStore"
SUITE = Suite(
    distribution="mcp",
    # The SDK's test files with event stores: streamable HTTP, its resumability and hosting.
    test_paths=(
        "tests/shared/test_streamable_http.py",
        "tests/interaction/transports/test_hosting_resume.py",
        "tests/interaction/transports/test_client_transport_http.py",
        "tests/server/test_streamable_http_router.py",
    ),
    plugin="helix_mcp_plugin",
    plugin_dir=HERE,
    deselect=HERE / "deselect.txt",
    pytest_args=(
        # Their addopts load pytest-examples (for their docs tests, not run here): the
        # same options without it.
        "-o",
        "addopts=",
        "-p",
        "anyio",
        # In the venv for the OpenAI SDK's tests; these run on anyio's plugin.
        "-p",
        "no:asyncio",
        "--inline-snapshot=disable",
    ),
)

if __name__ == "__main__":
    raise SystemExit(SUITE.main(WHAT, sys.argv[1:]))
