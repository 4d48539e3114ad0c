"""The whole contract suite on the example store (docs/backends/writing.md)."""

from __future__ import annotations

from typing import Any

import pytest

from helix_agents.contract import SessionStoreContract, StoreFactory

from . import JsonDocumentStore


class TestJsonDocumentStore(SessionStoreContract):
    """Every rule on :class:`JsonDocumentStore`; instances share one pair of dicts."""

    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        documents: dict[str, str] = {}
        shared: dict[str, str] = {}

        def factory(**options: Any) -> JsonDocumentStore:
            return JsonDocumentStore(documents, shared, **options)

        return factory
