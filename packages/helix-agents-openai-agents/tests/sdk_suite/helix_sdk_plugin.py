"""pytest plugin: the SDK's session tests with its session classes swapped for HelixSession.

Loaded by ``run_sdk_tests.py`` as ``-p helix_sdk_plugin`` into the SDK's own
test tree (``--helix-backend memory|sqlite|postgres|redis``). Before any test
module is imported, ``SQLiteSession``, ``AsyncSQLiteSession``, ``RedisSession``
and ``SQLAlchemySession`` (the classes those modules build directly) become
HelixSession subclasses with the same name and constructor: sessions on one ``db_path``
(one Redis client and key prefix, one engine and table) share their data,
``":memory:"`` gives a session its own. Closing ends the session as the SDK class
does (``HelixSession.close``: later calls raise ``RuntimeError("<class> is closed")``),
and keeps its ownership rule: a Redis or MongoDB session built on a client the
caller injected is not ended by ``close()``, one that made its client (``from_url``,
``from_uri``) is, and closes that client. The checked-in ``deselect.txt`` drops the
tests of other backends' internals.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar, cast

import pytest
import pytest_asyncio
from helix_backends import Stores
from sdist_plugin import server

from helix_agents.core import SessionStateStore
from helix_agents.openai_agents import HelixSession

_stores: Stores | None = None
# What was started to find the backend's server (binaries, a container), until unconfigure.
_servers = contextlib.ExitStack()
# Stores opened so far, with the loop each was opened in.
_opened: list[tuple[asyncio.AbstractEventLoop, SessionStateStore]] = []
# The keys of the current test: one lazily opened store per (key, event loop).
_by_key: dict[str, _OpenedOnUse] = {}
# The URL of each Redis or MongoDB client a swapped ``from_url``/``from_uri`` made.
_made_clients: dict[int, str] = {}


class _OpenedOnUse:
    """A store entered on its first call in the running loop (sessions are built in sync code).

    Postgres and Redis connections belong to one event loop, and the SDK's
    fixtures run in another loop than its tests, so each loop gets its own
    store on the key's data.
    """

    def __init__(self, key: str | None) -> None:
        self._key = key
        self._per_loop: dict[asyncio.AbstractEventLoop, SessionStateStore] = {}
        self._lock: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}

    async def _store(self) -> SessionStateStore:
        loop = asyncio.get_running_loop()
        lock = self._lock.setdefault(loop, asyncio.Lock())
        async with lock:
            store = self._per_loop.get(loop)
            if store is None:
                assert _stores is not None
                store = await _stores.store(self._key).__aenter__()
                self._per_loop[loop] = store
                _opened.append((loop, store))
            return store

    def __getattr__(self, name: str) -> Callable[..., Any]:
        async def call(*args: Any, **kwargs: Any) -> Any:
            method = getattr(await self._store(), name)
            return await method(*args, **kwargs)

        return call


def _store_for(db_path: object) -> SessionStateStore:
    key = None if str(db_path) == ":memory:" else os.fspath(cast(Any, db_path))
    if key is None:
        return cast(SessionStateStore, _OpenedOnUse(None))
    # setdefault: sessions of one key may be built in several threads at once.
    return cast(SessionStateStore, _by_key.setdefault(key, _OpenedOnUse(key)))


def _client_store(kind: str, client: Any, place: str) -> SessionStateStore:
    """The store of ``place`` on ``client``'s server: clients made from one URL share it."""
    where = _made_clients.get(id(client), f"client-{id(client)}")
    return _store_for(f"{kind}:{where}/{place}")


class SQLiteSession(HelixSession):
    """``SQLiteSession``'s constructor over HelixSession on the chosen backend."""

    def __init__(
        self,
        session_id: str,
        db_path: str | os.PathLike[str] = ":memory:",
        sessions_table: str = "agent_sessions",
        messages_table: str = "agent_messages",
        session_settings: Any = None,
    ) -> None:
        super().__init__(session_id, _store_for(db_path), session_settings=session_settings)
        self.db_path = db_path


class AsyncSQLiteSession(SQLiteSession):
    """``AsyncSQLiteSession``'s constructor, whose ``close`` is a coroutine."""

    async def close(self) -> None:  # type: ignore[override]
        """``HelixSession.close``, awaitable as the SDK class's."""
        super().close()


class _ClientSession(HelixSession):
    """A session on a client: ended by ``close()`` only if it made the client."""

    _owns_client = False

    async def _close_client(self) -> None:
        raise NotImplementedError

    async def close(self) -> None:  # type: ignore[override]
        """As the SDK class: an injected client is the caller's, and the session stays usable."""
        if self._owns_client:
            super().close()
            await self._close_client()

    async def ping(self) -> bool:
        """The store is the caller's and open: reachable unless this session is closed."""
        self._check_open()
        return True


class RedisSession(_ClientSession):
    """``RedisSession``'s constructor: sessions on one server and key prefix share their data."""

    def __init__(
        self,
        session_id: str,
        *,
        redis_client: Any,
        key_prefix: str = "agents:session",
        ttl: int | None = None,
        session_settings: Any = None,
    ) -> None:
        store = _client_store("redis", redis_client, key_prefix)
        super().__init__(session_id, store, session_settings=session_settings)
        self._redis = redis_client
        self._key_prefix = key_prefix
        self._ttl = ttl

    @classmethod
    def from_url(
        cls, session_id: str, *, url: str, redis_kwargs: Any = None, **kwargs: Any
    ) -> RedisSession:
        """As ``RedisSession.from_url``, with a client of its own (never used for the data)."""
        import redis.asyncio  # the module attribute the SDK's tests patch

        client = redis.asyncio.from_url(url, **(redis_kwargs or {}))
        _made_clients[id(client)] = url
        session = cls(session_id, redis_client=client, **kwargs)
        session._owns_client = True
        return session

    async def _close_client(self) -> None:
        await self._redis.aclose()


class SQLAlchemySession(HelixSession):
    """``SQLAlchemySession``'s constructor: sessions on one database and table share their data."""

    def __init__(
        self,
        session_id: str,
        *,
        engine: Any,
        create_tables: bool = False,
        sessions_table: str = "agent_sessions",
        messages_table: str = "agent_messages",
        session_settings: Any = None,
    ) -> None:
        url = str(getattr(engine, "url", ""))
        # Engines on one file or server share it; each engine on ":memory:" is a database.
        where = url if url and ":memory:" not in url else f"engine-{id(engine)}"
        store = _store_for(f"sqlalchemy:{where}/{messages_table}")
        super().__init__(session_id, store, session_settings=session_settings)
        self._engine = engine

    @classmethod
    def from_url(
        cls, session_id: str, *, url: str, engine_kwargs: Any = None, **kwargs: Any
    ) -> SQLAlchemySession:
        """As ``SQLAlchemySession.from_url``, with an engine of its own (not used for data)."""
        from sqlalchemy.ext.asyncio import create_async_engine

        return cls(session_id, engine=create_async_engine(url, **(engine_kwargs or {})), **kwargs)

    @property
    def engine(self) -> Any:
        """The engine the session was built on (the data is in the chosen backend)."""
        return self._engine


class MongoDBSession(_ClientSession):
    """``MongoDBSession``'s constructor: sessions on one client, database and collection share."""

    # The tests' session helper clears MongoDBSession's registry of initialised indexes.
    _init_state: ClassVar[dict[Any, Any]] = {}

    def __init__(
        self,
        session_id: str,
        *,
        client: Any,
        database: str = "agents",
        sessions_collection: str = "agent_sessions",
        messages_collection: str = "agent_messages",
        session_settings: Any = None,
    ) -> None:
        store = _client_store("mongodb", client, f"{database}/{messages_collection}")
        super().__init__(session_id, store, session_settings=session_settings)
        self._client = client

    @classmethod
    def from_uri(
        cls,
        session_id: str,
        *,
        uri: str,
        database: str = "agents",
        client_kwargs: Any = None,
        session_settings: Any = None,
        **kwargs: Any,
    ) -> MongoDBSession:
        """As ``MongoDBSession.from_uri``: sessions on one URI and database share their data."""
        # The SDK module's AsyncMongoClient, which the tests fake and patch.
        module = importlib.import_module("agents.extensions.memory.mongodb_session")
        client = module.AsyncMongoClient(uri, **(client_kwargs or {}))
        _made_clients[id(client)] = uri
        session = cls(
            session_id,
            client=client,
            database=database,
            session_settings=session_settings,
            **kwargs,
        )
        session._owns_client = True
        return session

    async def _close_client(self) -> None:
        await self._client.close()


# Swapped in the test modules that import them once those modules are loaded: the SDK
# module itself needs pymongo, which the MongoDB tests replace by fakes in sys.modules.
_LATE_SWAPS: dict[str, type[HelixSession]] = {"MongoDBSession": MongoDBSession}

_SWAPS = {
    "SQLiteSession": (SQLiteSession, ("agents", "agents.memory")),
    "AsyncSQLiteSession": (
        AsyncSQLiteSession,
        ("agents.extensions.memory", "agents.extensions.memory.async_sqlite_session"),
    ),
    "RedisSession": (
        RedisSession,
        ("agents.extensions.memory", "agents.extensions.memory.redis_session"),
    ),
    "SQLAlchemySession": (
        SQLAlchemySession,
        ("agents.extensions.memory", "agents.extensions.memory.sqlalchemy_session"),
    ),
}


def pytest_configure(config: pytest.Config) -> None:
    """Find the backend's server and swap the session classes before any test module loads."""
    global _stores
    backend = config.getoption("helix_backend")
    url = server(config, _servers)
    workdir = Path(config.rootpath) / ".helix-sdk-work" / backend
    _stores = Stores(backend, url, workdir)
    # What the SDK itself builds on the real classes (subclasses, isinstance checks) loads first.
    for module in (
        "agents.extensions.memory.advanced_sqlite_session",
        "agents.extensions.memory.encrypt_session",
    ):
        importlib.import_module(module)
    for name, (swap, modules) in _SWAPS.items():
        for module in modules:
            setattr(importlib.import_module(module), name, swap)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the run's schemas or keys; stop what was started to find a server."""
    if _stores is not None:
        _stores.purge()
    _servers.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Swap the late classes (sdist_plugin drops what deselect.txt names)."""
    for module in {item.module for item in items if isinstance(item, pytest.Function)}:
        for name, swap in _LATE_SWAPS.items():
            if hasattr(module, name):
                setattr(module, name, swap)


@pytest.fixture(autouse=True)
def _helix_fresh_keys() -> Iterator[None]:
    _by_key.clear()
    _made_clients.clear()
    if _stores is not None:
        _stores.forget_keys()
    yield
    # Stores of loops that are gone (a sync test's asyncio.run): their threads still stop.
    for _, store in _opened:
        if not inspect.iscoroutinefunction(getattr(store, "close", None)):
            continue
        with contextlib.suppress(Exception):  # best effort: the store's loop has closed
            asyncio.run(store.close())
    _opened.clear()


async def _close_opened_in_this_loop() -> None:
    loop = asyncio.get_running_loop()
    mine = [store for (owner, store) in _opened if owner is loop]
    _opened[:] = [(owner, store) for (owner, store) in _opened if owner is not loop]
    for store in mine:
        await store.close()


@pytest_asyncio.fixture(loop_scope="function", autouse=True)
async def _helix_close_test_loop_stores() -> AsyncIterator[None]:
    yield
    await _close_opened_in_this_loop()


@pytest_asyncio.fixture(loop_scope="session", autouse=True)
async def _helix_close_session_loop_stores() -> AsyncIterator[None]:
    yield
    await _close_opened_in_this_loop()
