"""The contract suite against ``--store-url``; collected only by the opt-in plugin."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from helix_agents.core import SessionStateStore, open_store

from ._base import StoreFactory
from .plugin import store_url
from .suite import SessionStoreContract


async def _empty(store: SessionStateStore) -> None:
    """Delete every session of the store's namespace: the listed ones, then the expired
    ones a sweep finds (they are listed no more)."""
    while sessions := (await store.list_all_sessions(first=200)).sessions:
        for session in sessions:
            await store.delete_session(session.id)
    while not (await store.sweep(limit=10_000)).wrapped:
        pass


class TestStoreByUrl(SessionStoreContract):
    """Every rule against the store named by ``--store-url``, in a fresh namespace per test."""

    @pytest.fixture
    async def store_factory(self, request: pytest.FixtureRequest) -> AsyncIterator[StoreFactory]:
        """Open stores on the URL under a namespace no other test uses; afterwards delete
        every session left in it."""
        url = store_url(request.config)
        assert url is not None  # collected only when a URL is given
        prefix: str = request.config.getoption("store_namespace_prefix")
        namespace = f"{prefix}{uuid.uuid4().hex[:12]}"

        def factory(**options: Any) -> SessionStateStore:
            return open_store(url, namespace=namespace, **options)

        yield factory
        async with open_store(url, namespace=namespace) as store:
            await _empty(store)
