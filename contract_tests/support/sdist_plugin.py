"""pytest plugin under every framework suite of :mod:`sdist_suite`: what is not adapter-specific.

``--helix-backend`` (the store under the swapped classes, read by the adapter's plugin),
``--helix-report`` (the counts by outcome, as JSON, for the runner), ``--helix-deselect``
(the checked-in list of tests that do not run, each with its reason; an entry that names
no collected test of a file that ran is an error, so the list cannot go stale) and
``--helix-timeout`` (a test that hangs fails, instead of the run).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helix_backends import BACKENDS, server_url

__all__ = ["count", "server"]

REQUIRE_BACKENDS_ENV = "HELIX_REQUIRE_BACKENDS"

_counts: dict[str, int] = {}


def count(outcome: str) -> None:
    """Add one to ``outcome``'s count in the report (an adapter's own, e.g. ``on_helix``)."""
    _counts[outcome] = _counts.get(outcome, 0) + 1


def server(config: pytest.Config, stack: contextlib.ExitStack) -> str | None:
    """The chosen backend's server URL (``None`` for memory and SQLite).

    None found ends the run as skipped, or fails it under ``HELIX_REQUIRE_BACKENDS=1``.
    """
    url, why = server_url(config.getoption("helix_backend"), stack)
    if why:
        if os.environ.get(REQUIRE_BACKENDS_ENV, "") not in ("", "0"):
            raise pytest.UsageError(f"{why} ({REQUIRE_BACKENDS_ENV} is set)")
        pytest.exit(f"skipped: {why}", returncode=0)
    return url


def pytest_addoption(parser: pytest.Parser) -> None:
    """The runner's options."""
    parser.addoption(
        "--helix-backend",
        choices=BACKENDS,
        default=os.environ.get("HELIX_SDK_BACKEND", "memory"),
        help="backend of the store under the swapped classes",
    )
    parser.addoption("--helix-report", default=None, help="write the counts as JSON here")
    parser.addoption("--helix-deselect", default=None, help="the list of tests not to run")
    parser.addoption(
        "--helix-timeout",
        type=int,
        default=60,
        help="fail a test that runs longer than this many seconds (0: never)",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Fail a test that hangs (SIGALRM, as pytest-timeout's signal method), instead of the run."""
    seconds: int = item.config.getoption("helix_timeout")
    if not seconds:
        return (yield)

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"{item.nodeid} ran longer than {seconds}s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        return (yield)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Drop the tests the deselect list names by node id (naming none is an error)."""
    path = config.getoption("helix_deselect")
    if not path:
        return
    entries = {}
    for line in Path(path).read_text().splitlines():
        node, _, reason = line.partition(" # ")
        if node.strip() and not line.startswith("#"):
            if not reason.strip():
                raise pytest.UsageError(f"{Path(path).name}: {node.strip()} has no reason")
            if "::" in node:  # whole files are left out of collection by the runner
                entries[node.strip()] = reason.strip()
    chosen, dropped, used = [], [], set()
    for item in items:
        match = next(
            (e for e in entries if item.nodeid == e or item.nodeid.startswith((e + "[", e + "::"))),
            None,
        )
        if match is None:
            chosen.append(item)
        else:
            used.add(match)
            dropped.append(item)
    # An entry for a file that ran but that names none of its tests is stale.
    files = {item.nodeid.split("::")[0] for item in items}
    unused = {e for e in set(entries) - used if e.split("::")[0] in files}
    if unused and not config.getoption("keyword") and not any("::" in a for a in config.args):
        raise pytest.UsageError(f"{Path(path).name} names no collected test: {sorted(unused)}")
    config.hook.pytest_deselected(items=dropped)
    items[:] = chosen


def pytest_deselected(items: list[pytest.Item]) -> None:
    """Count deselected tests."""
    _counts["deselected"] = _counts.get("deselected", 0) + len(items)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count outcomes: a test is failed if any phase failed, skipped if its setup skipped."""
    if report.when == "call" or (report.when == "setup" and not report.passed):
        count(report.outcome)
    elif report.when == "teardown" and report.failed:
        count("failed")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write the counts for the runner."""
    path = session.config.getoption("helix_report")
    if path:
        Path(path).write_text(json.dumps(_counts))
