"""pytest plugin: CrewAI's flow persistence tests with HelixFlowPersistence under them.

Loaded by ``run_crewai_sdk_tests.py`` as ``-p helix_crewai_plugin`` into CrewAI's own test
tree (``--helix-backend memory|sqlite|postgres|redis``). The ``SQLiteFlowPersistence``
their modules build by name becomes a HelixFlowPersistence subclass with its constructor:
one ``db_path`` is one store's data (two objects on a path share it, as two connections
to a file do), fresh for each test; CrewAI's default persistence (``@persist()``,
``Flow.from_pending(id)`` without one) is one of ours too. The checked-in
``deselect.txt`` drops the tests of SQLiteFlowPersistence's own internals, with reasons.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from crewai.flow.persistence.factory import set_flow_persistence_factory
from helix_backends import Stores
from sdist_plugin import count, server

from helix_agents.crewai import HelixFlowPersistence

_servers = contextlib.ExitStack()
_stores: Stores | None = None
_opened: list[HelixFlowPersistence] = []


class SQLiteFlowPersistence(HelixFlowPersistence):
    """Built where CrewAI's tests build theirs: ``SQLiteFlowPersistence(db_path)``."""

    def __init__(self, db_path: str | None = None, /, **kwargs: Any) -> None:
        assert _stores is not None, "a persistence built outside a test"
        super().__init__(_stores.store(str(db_path or "default")), **kwargs)
        _opened.append(self)


def _default() -> HelixFlowPersistence:
    return SQLiteFlowPersistence()


def pytest_configure(config: pytest.Config) -> None:
    """Find the backend's server; make ours CrewAI's default persistence."""
    global _stores
    backend = config.getoption("helix_backend")
    url = server(config, _servers)
    _stores = Stores(backend, url, Path(config.rootpath) / ".helix-crewai-work" / backend)
    set_flow_persistence_factory(_default)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the run's data and stop what was started to find a server."""
    set_flow_persistence_factory(None)
    if _stores is not None:
        _stores.purge()
    _servers.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Swap the persistence class (sdist_plugin drops what deselect.txt names)."""
    for module in {item.module for item in items if isinstance(item, pytest.Function)}:
        if hasattr(module, "SQLiteFlowPersistence"):
            module.SQLiteFlowPersistence = SQLiteFlowPersistence


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Fresh data for each test; close the persistences it built after it."""
    assert _stores is not None
    _stores.forget_keys()
    try:
        return (yield)
    finally:
        if _opened:
            count("on_helix")
        while _opened:
            _opened.pop().close()
