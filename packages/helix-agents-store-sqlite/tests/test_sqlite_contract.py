"""The whole contract suite on a SQLite file; two instances are two stores on one file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helix_agents.contract import SessionStoreContract, StoreFactory
from helix_agents.store_sqlite import SQLiteStateStore


class TestSQLiteContract(SessionStoreContract):
    """Every rule id against ``SQLiteStateStore``."""

    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> StoreFactory:
        path = tmp_path / "contract.db"

        def factory(**options: Any) -> SQLiteStateStore:
            return SQLiteStateStore(path, **options)

        return factory
