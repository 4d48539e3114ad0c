"""The whole contract suite on a SQLite file with encryption on (docs/encryption.md): every
rule holds when the rows the file keeps as JSON text are sealed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helix_agents.contract import SessionStoreContract, StoreFactory
from helix_agents.contract.differential import run_differential
from helix_agents.core.encryption import LocalKeyring, encrypt, rotate_keys
from helix_agents.core.errors import StoreUnavailableError
from helix_agents.store_memory import MemoryStateStore
from helix_agents.store_sqlite import SQLiteStateStore

KEYS = LocalKeyring({"k1": LocalKeyring.new_key()})


class TestEncryptedSQLiteContract(SessionStoreContract):
    """Every rule id against an encrypted ``SQLiteStateStore``; instances share one key."""

    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> StoreFactory:
        path = tmp_path / "contract.db"

        def factory(**options: Any) -> SQLiteStateStore:
            return encrypt(SQLiteStateStore(path, **options), KEYS)

        return factory


def test_encrypted_sqlite_matches_core_on_generated_sequences(tmp_path: Path) -> None:
    """The differential test (docs/contract.md) with encryption on: every result and error
    (class, code, message) equals the plain memory store's."""

    def factory(**options: Any) -> SQLiteStateStore:
        return encrypt(SQLiteStateStore(tmp_path / "diff.db", **options), KEYS)

    assert run_differential(factory, MemoryStateStore) > 0


@pytest.mark.anyio
async def test_rotation_needs_the_store_open(tmp_path: Path) -> None:
    """``rotate_keys`` on a store its engine needs opened, before ``async with`` and after
    ``close``, is refused (INP-7, INP-5)."""
    store = encrypt(SQLiteStateStore(tmp_path / "rotate.db"), KEYS)
    with pytest.raises(StoreUnavailableError, match="not open"):
        await rotate_keys(store)
    async with store:
        assert await rotate_keys(store) == 0
    with pytest.raises(StoreUnavailableError, match="closed"):
        await rotate_keys(store)
