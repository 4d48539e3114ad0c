"""pytest plugin: the MCP SDK's streamable-HTTP tests with their event stores swapped.

Loaded by ``run_mcp_sdk_tests.py`` as ``-p helix_mcp_plugin`` into the SDK's own test
tree (``--helix-backend memory|sqlite|postgres|redis``). The event stores those tests
build by name (``SimpleEventStore`` in tests/shared/test_streamable_http.py,
``SequencedEventStore`` of tests/interaction/transports/_event_store.py) become
HelixEventStore subclasses with the same constructor, on a store of the chosen backend
with fresh data per test. The store runs on an event loop of its own thread (the SDK's
tests each run in their own loop; Postgres and Redis connections belong to one), reached
through :class:`ThreadStore`. The checked-in ``deselect.txt`` drops the tests of the
SDK's in-memory stores' internals, each with its reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from helix_backends import Stores
from sdist_plugin import count, server

from helix_agents.core import SessionStateStore
from helix_agents.mcp import HelixEventStore

# The test module names the swapped classes are looked up by.
SWAPPED = ("SimpleEventStore", "SequencedEventStore")

_servers = contextlib.ExitStack()
_stores: Stores | None = None
_loop = asyncio.new_event_loop()
_thread = threading.Thread(target=_loop.run_forever, name="helix-store-loop", daemon=True)
_current: ThreadStore | None = None
_used_in_test = False


def _call(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` on the store's loop from synchronous code."""
    return asyncio.run_coroutine_threadsafe(coro, _loop).result()


class ThreadStore:
    """A store that lives on the plugin's loop; each method awaited from any loop."""

    def __init__(self, store: SessionStateStore) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.store, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            future = asyncio.run_coroutine_threadsafe(method(*args, **kwargs), _loop)
            return await asyncio.wrap_future(future)

        return call


class _Swapped(HelixEventStore):
    """HelixEventStore on the current test's store, built as the SDK's store is: no arguments."""

    def __init__(self) -> None:
        global _used_in_test
        assert _current is not None, "an event store built outside a test"
        _used_in_test = True
        super().__init__(cast(SessionStateStore, _current))


class SimpleEventStore(_Swapped):
    """Built where tests/shared/test_streamable_http.py builds its ``SimpleEventStore``."""


class SequencedEventStore(_Swapped):
    """Built where the interaction tests build their ``SequencedEventStore``."""


_SWAPS: dict[str, type[_Swapped]] = {
    "SimpleEventStore": SimpleEventStore,
    "SequencedEventStore": SequencedEventStore,
}


def pytest_configure(config: pytest.Config) -> None:
    """Find the backend's server and start the store's loop."""
    global _stores
    backend = config.getoption("helix_backend")
    url = server(config, _servers)
    _stores = Stores(backend, url, Path(config.rootpath) / ".helix-mcp-work" / backend)
    _thread.start()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the run's data; stop the loop and what was started to find a server."""
    if _stores is not None:
        _stores.purge()
    if _thread.is_alive():
        _loop.call_soon_threadsafe(_loop.stop)
        _thread.join()
    _servers.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Swap the event stores (sdist_plugin drops what deselect.txt names)."""
    for module in {item.module for item in items if isinstance(item, pytest.Function)}:
        for name, swap in _SWAPS.items():
            if hasattr(module, name):
                setattr(module, name, swap)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Give the test a store on fresh data; close it after the test."""
    global _current, _used_in_test
    assert _stores is not None
    store = _call(_stores.store(None).__aenter__())
    _current, _used_in_test = ThreadStore(store), False
    try:
        return (yield)
    finally:
        _current = None
        if _used_in_test:
            count("on_helix")
        _call(store.__aexit__(None, None, None))
