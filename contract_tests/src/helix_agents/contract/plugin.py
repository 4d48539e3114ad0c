"""Opt-in pytest plugin: ``pytest -p helix_agents.contract.plugin --store-url URL``.

Runs the whole contract suite against a live store opened by URL through
:func:`helix_agents.core.open_store`, each test in a throwaway namespace. With
or without a URL, it ends the run with the state machine's step counts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ._coverage import recorded_runs

__all__ = [
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_terminal_summary",
    "store_url",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--store-url``."""
    group = parser.getgroup("helix-agents contract")
    group.addoption(
        "--store-url",
        metavar="URL",
        default=None,
        help="run the helix-agents contract suite against the store at URL "
        "(memory://, sqlite:///x.db, postgresql://…, redis://…)",
    )
    group.addoption(
        "--store-url-file",
        metavar="PATH",
        default=None,
        help="read the URL from the file at PATH instead, so a URL with a password is "
        "not in the process's argv (what `helix-store check` passes)",
    )
    group.addoption(
        "--store-namespace-prefix",
        metavar="PREFIX",
        default="contract_",
        help="start of each test's throwaway namespace (default contract_), so a caller "
        "can find and drop what the run left (schemas, files)",
    )


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Collect the by-URL contract class when ``--store-url`` is given."""
    if store_url(config) is None:
        return
    from . import _by_url

    module = pytest.Module.from_parent(session, path=Path(_by_url.__file__))
    items.extend(session.genitems(module))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print, per contract class, the state machine's steps landed/tried by kind."""
    runs = recorded_runs()
    if not runs:
        return
    terminalreporter.section("helix-agents state machine: steps landed/tried")
    for label, counts in runs:
        terminalreporter.write_line(f"{label}: {counts.table()}")


def store_url(config: pytest.Config) -> str | None:
    """The URL ``--store-url`` or ``--store-url-file`` names, if either is given."""
    path = config.getoption("store_url_file")
    if path is not None:
        return Path(path).read_text(encoding="utf-8").strip()
    url: str | None = config.getoption("store_url")
    return url
