"""The whole contract suite on the example store (docs/backends/writing.md)."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from helix_agents.contract import RULE_IDS, SessionStoreContract, StoreFactory

from . import JsonDocumentStore

# The context store protocol (docs/context-strategies.md) is a second protocol this
# example leaves out to stay small; the memory store's _context.py shows it.
_NO_CONTEXT_STORE = "the example implements SessionStateStore only, not ContextStore"


class TestJsonDocumentStore(SessionStoreContract):
    """Every rule on :class:`JsonDocumentStore`; instances share one pair of dicts."""

    expected_failures: ClassVar[dict[str, str]] = {
        rule_id: _NO_CONTEXT_STORE for rule_id in RULE_IDS if rule_id.startswith("CS-")
    }

    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        documents: dict[str, str] = {}
        shared: dict[str, str] = {}

        def factory(**options: Any) -> JsonDocumentStore:
            return JsonDocumentStore(documents, shared, **options)

        return factory
