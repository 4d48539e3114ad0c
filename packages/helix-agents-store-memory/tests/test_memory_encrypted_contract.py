"""The whole contract suite on the memory store with encryption on (docs/encryption.md):
every rule holds when every record is sealed."""

from __future__ import annotations

from typing import Any

import pytest

from helix_agents.contract import SessionStoreContract, StoreFactory
from helix_agents.core.encryption import LocalKeyring, encrypt
from helix_agents.store_memory import MemoryData, MemoryStateStore

KEYS = LocalKeyring({"k1": LocalKeyring.new_key()})


class TestEncryptedMemoryContract(SessionStoreContract):
    """Every rule on an encrypted :class:`MemoryStateStore`; instances share one key."""

    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        data = MemoryData()

        def factory(**options: Any) -> MemoryStateStore:
            return encrypt(MemoryStateStore(data, **options), KEYS)

        return factory
