"""The PostgreSQL engine against the memory store: generated sequences, every result and error."""

from __future__ import annotations

import functools
from collections.abc import Callable

import anyio
import pytest

from helix_agents.contract.differential import run_differential
from helix_agents.store_memory import MemoryStateStore
from helix_agents.store_postgres import PostgresStateStore

pytestmark = pytest.mark.anyio


async def test_postgres_matches_core_on_generated_sequences(
    pg_url: str, store_on: Callable[..., PostgresStateStore]
) -> None:
    """Each operation's result or error (class, code, message) equals the memory store's."""
    factory = functools.partial(store_on, pg_url)
    compared = await anyio.to_thread.run_sync(
        functools.partial(run_differential, factory, MemoryStateStore)
    )
    assert compared > 0
