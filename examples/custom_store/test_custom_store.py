"""The whole contract suite on the example store (docs/backends/writing.md)."""

from __future__ import annotations

from typing import Any

import pytest

from helix_agents.contract import SessionStoreContract, StoreFactory
from helix_agents.contract.differential import run_differential
from helix_agents.store_memory import MemoryStateStore

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


def test_matches_core_on_generated_sequences() -> None:
    """The differential test (docs/contract.md): every result and error equals the memory
    store's, context store included."""
    documents: dict[str, str] = {}
    shared: dict[str, str] = {}

    def factory(**options: Any) -> JsonDocumentStore:
        return JsonDocumentStore(documents, shared, **options)

    assert run_differential(factory, MemoryStateStore) > 0
