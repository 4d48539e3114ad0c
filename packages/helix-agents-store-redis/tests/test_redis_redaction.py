"""RED-6 and ERA-5 on Redis: once redacted or erased, no key of the store's namespace holds
the data (in its name or its values)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aredis

from helix_agents.contract._helpers import commit, user
from helix_agents.contract.erasure_data import ERASED_TEXT, write_user_data
from helix_agents.contract.redaction_scan import SECRET, redact_secret_rows, write_secret_rows
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio

PREFIX = "helix-test"


@pytest.fixture
async def namespace(redis_url: str) -> AsyncIterator[str]:
    """A namespace of this test alone; its keys are deleted afterwards."""
    name = f"red{uuid.uuid4().hex[:8]}"
    yield name
    async with aredis.Redis.from_url(redis_url) as client:
        async for key in client.scan_iter(match=f"{PREFIX}:{name}:*"):
            await client.delete(key)


async def _values(client: aredis.Redis, key: Any) -> list[Any]:
    """Every member, field and value of ``key``, by its type."""
    kind = await client.type(key)
    kind = kind.decode() if isinstance(kind, bytes) else kind
    if kind == "string":
        return [await client.get(key)]
    if kind == "hash":
        return [part for pair in (await client.hgetall(key)).items() for part in pair]
    if kind == "list":
        return list(await client.lrange(key, 0, -1))
    if kind == "set":
        return list(await client.smembers(key))
    if kind == "zset":
        return list(await client.zrange(key, 0, -1))
    raise AssertionError(f"key {key!r} has an unexpected type {kind}")


async def _keys_holding(url: str, namespace: str, text: str) -> list[str]:
    """The keys of the store's namespace (the session's, the listing indexes) holding it."""
    found = []
    async with aredis.Redis.from_url(url) as client:
        keys = [key async for key in client.scan_iter(match=f"{PREFIX}:{namespace}:*")]
        assert any(key.endswith(b":rows") for key in keys)
        for key in keys:
            values = await _values(client, key)
            if any(text.encode() in value for value in values if isinstance(value, bytes)):
                found.append(key.decode().rsplit(":", 1)[-1])
    return found


async def test_redacted_text_leaves_every_key(redis_url: str, namespace: str) -> None:
    async with RedisStateStore(redis_url, key_prefix=PREFIX, namespace=namespace) as store:
        await write_secret_rows(store, "s")
        assert await _keys_holding(redis_url, namespace, SECRET) == ["rows"]
        await redact_secret_rows(store, "s")
        assert await _keys_holding(redis_url, namespace, SECRET) == []
        assert len(await store.list_redactions("s")) == 5


async def _names_holding(url: str, namespace: str, text: str) -> list[str]:
    """The keys of the namespace whose name holds ``text``."""
    async with aredis.Redis.from_url(url) as client:
        pattern = f"{PREFIX}:{namespace}:*"
        return [
            key.decode() async for key in client.scan_iter(match=pattern) if text.encode() in key
        ]


async def test_an_erased_user_leaves_no_key(redis_url: str, namespace: str) -> None:
    """ERA-5: no key name or value holds the user's id, the session ids or their text."""
    gone, sids = "erased-user-51c2", ["erased-session-1a", "erased-session-2b"]
    needles = (gone, *sids, ERASED_TEXT)
    async with RedisStateStore(redis_url, key_prefix=PREFIX, namespace=namespace) as store:
        await write_user_data(store, gone, sids)
        await store.create_session("kept", user_id="kept-user-77e0")
        await store.append_messages("kept", commit(user("kept-text-0d9a")))

        async def held(needle: str) -> list[str]:
            names = await _names_holding(redis_url, namespace, needle)
            return names + await _keys_holding(redis_url, namespace, needle)

        for needle in needles:
            assert await held(needle)  # seen while stored
        assert await store.erase_user(gone) == sids
        assert [n for n in needles if await held(n)] == []
        assert await _keys_holding(redis_url, namespace, "kept-text-0d9a") == ["rows"]
