"""The contract suite against ``--store-url``; collected only by the opt-in plugin."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from helix_agents.core import SessionStateStore, open_store

from ._base import StoreFactory
from .suite import SessionStoreContract


class TestStoreByUrl(SessionStoreContract):
    """Every rule against the store named by ``--store-url``, in a fresh namespace per test."""

    @pytest.fixture
    def store_factory(self, request: pytest.FixtureRequest) -> StoreFactory:
        """Open stores on the URL under a namespace that no other test uses."""
        url: str = request.config.getoption("store_url")
        namespace = f"contract_{uuid.uuid4().hex[:12]}"

        def factory(**options: Any) -> SessionStateStore:
            return open_store(url, namespace=namespace, **options)

        return factory
