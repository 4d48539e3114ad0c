"""The contract suite against ``--store-url``; collected only by the opt-in plugin."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from helix_agents.core import SessionInfo, SessionStateStore, open_store

from ._base import StoreFactory
from .plugin import store_url
from .suite import SessionStoreContract


class _Recording:
    """A store that remembers the sessions it created, so the test can delete them after."""

    def __init__(self, store: SessionStateStore, created: set[str]) -> None:
        self._store = store
        self._created = created

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def __aenter__(self) -> _Recording:
        await self._store.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._store.__aexit__(None, None, None)

    async def create_session(self, *args: Any, **kwargs: Any) -> SessionInfo:
        info = await self._store.create_session(*args, **kwargs)
        self._created.add(info.id)
        return info

    async def clone_session(self, *args: Any, **kwargs: Any) -> SessionInfo:
        info = await self._store.clone_session(*args, **kwargs)
        self._created.add(info.id)
        return info


class TestStoreByUrl(SessionStoreContract):
    """Every rule against the store named by ``--store-url``, in a fresh namespace per test."""

    @pytest.fixture
    async def store_factory(self, request: pytest.FixtureRequest) -> AsyncIterator[StoreFactory]:
        """Open stores on the URL under a namespace no other test uses; delete what they made."""
        url = store_url(request.config)
        assert url is not None  # collected only when a URL is given
        prefix: str = request.config.getoption("store_namespace_prefix")
        namespace = f"{prefix}{uuid.uuid4().hex[:12]}"
        created: set[str] = set()

        def factory(**options: Any) -> SessionStateStore:
            return _Recording(open_store(url, namespace=namespace, **options), created)

        yield factory
        async with open_store(url, namespace=namespace) as store:
            for session_id in created:
                await store.delete_session(session_id)
