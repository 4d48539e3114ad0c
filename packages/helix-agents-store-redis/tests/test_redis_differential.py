"""The Redis scripts against core's rules: generated sequences, every result and error compared."""

from __future__ import annotations

import functools
from collections.abc import Callable

import anyio
import pytest

from helix_agents.contract.differential import run_differential
from helix_agents.store_memory import MemoryStateStore
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("where", ["standalone_factory", "cluster_factory"])
async def test_redis_matches_core_on_generated_sequences(
    where: str, request: pytest.FixtureRequest
) -> None:
    """Standalone and cluster: each operation's result or error equals the memory store's."""
    factory: Callable[..., RedisStateStore] = request.getfixturevalue(where)
    compared = await anyio.to_thread.run_sync(
        functools.partial(run_differential, factory, MemoryStateStore)
    )
    assert compared > 0
