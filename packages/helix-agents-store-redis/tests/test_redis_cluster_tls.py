"""A Redis Cluster over TLS, opened from its URL as docs/backends/redis.md gives it.

The cluster's three masters speak only TLS, to clients and to each other, with
certificates from the CA the fixtures make; the store uses every kind of call on it.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from redis.crc import key_slot

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    MessageCommit,
    ScopedStateDelta,
    StateStoreError,
    StoreUnavailableError,
    ValidationError,
    open_store,
)
from helix_agents.core.errors import StoreMisconfiguredError
from helix_agents.store_redis import RedisStateStore

pytestmark = pytest.mark.anyio


async def open_fails(url: str) -> tuple[StateStoreError, float]:
    """The error of opening a store on ``url``, and how long it took to come."""
    started = time.monotonic()
    with pytest.raises(StateStoreError) as caught:
        async with open_store(url, namespace="tls-fails"):
            pass
    return caught.value, time.monotonic() - started


async def test_every_kind_of_call_works_on_a_tls_cluster(
    tls_cluster_url: str, tls_ca: Path
) -> None:
    url = f"{tls_cluster_url}?ssl=true&ssl_ca_certs={tls_ca}"
    user = f"u{uuid.uuid4().hex[:8]}"
    async with open_store(url, namespace=f"t{uuid.uuid4().hex[:12]}") as store:
        assert isinstance(store, RedisStateStore)
        sid = (await store.create_session(user_id=user)).id
        rows = (ChatMessage(role="user", content="hi"), ChatMessage(role="assistant", content="yo"))
        await store.append_messages(sid, MessageCommit(messages=rows))
        assert await store.get_messages(sid) == list(rows)
        assert await store.get_messages(sid, limit=1) == [rows[1]]
        info = await store.get_session(sid)
        assert info is not None and info.message_count == 2 and info.user_id == user
        assert [s.id for s in (await store.list_sessions(user)).sessions] == [sid]

        # The app and user maps live on slots of their own, away from the session's.
        meta = store.options.keys.session(sid, ("meta",))[0]
        owner = next(
            name
            for name in ("ada", "bob", "cy")
            if key_slot(store.options.keys.scoped("app", name)[0].encode())
            != key_slot(meta.encode())
        )
        deltas = (
            ScopedStateDelta(scope="app", owner=owner, changes={"n": 1}),
            ScopedStateDelta(scope="user", owner=user, changes={"lang": "fr"}),
        )
        row = ChatMessage(role="user", content="scoped")
        await store.append_messages(sid, MessageCommit(messages=(row,), scoped_state=deltas))
        assert await store.get_scoped_state("app", owner) == {"n": 1}
        assert await store.get_scoped_state("user", user) == {"lang": "fr"}
        assert (await store.get_messages(sid))[-1] == row

        checkpoint = Checkpoint(
            checkpoint_id="c1",
            run_id="r1",
            message_count=3,
            state={"step": 1},
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
        )
        await store.save_checkpoint(sid, checkpoint)
        assert await store.get_checkpoint(sid, "c1") == checkpoint
        assert await store.latest_checkpoint(sid) == checkpoint
        assert await store.delete_session(sid)
        assert await store.get_session(sid) is None


async def test_a_ca_that_did_not_sign_fails_fast_saying_tls(
    tls_cluster_url: str, tls_other_ca: Path
) -> None:
    err, took = await open_fails(f"{tls_cluster_url}?ssl=true&ssl_ca_certs={tls_other_ca}")
    assert isinstance(err, StoreMisconfiguredError) and not err.retryable, err
    assert "TLS failed" in str(err) and "CERTIFICATE_VERIFY_FAILED" in str(err)
    assert took < 2


async def test_a_missing_ca_file_fails_fast_naming_it(tls_cluster_url: str, tmp_path: Path) -> None:
    missing = tmp_path / "nope.pem"
    err, took = await open_fails(f"{tls_cluster_url}?ssl=true&ssl_ca_certs={missing}")
    assert isinstance(err, StoreMisconfiguredError), err
    assert "TLS failed" in str(err) and "ssl_ca_certs" in str(err) and str(missing) in str(err)
    assert took < 2


async def test_tls_against_a_plain_cluster_fails_fast_saying_plain_redis(
    redis_cluster_url: str, tls_ca: Path
) -> None:
    err, took = await open_fails(f"{redis_cluster_url}?ssl=true&ssl_ca_certs={tls_ca}")
    assert isinstance(err, StoreMisconfiguredError), err
    assert "TLS failed" in str(err) and "plain Redis" in str(err)
    assert took < 2


async def test_ssl_false_means_no_tls(tls_cluster_url: str, tls_ca: Path) -> None:
    # The TLS-only nodes hang up on a plain client: "false" did not turn TLS on.
    err, _ = await open_fails(f"{tls_cluster_url}?ssl=false&ssl_ca_certs={tls_ca}")
    assert isinstance(err, StoreUnavailableError), err
    assert "do they want TLS (ssl=true)?" in str(err), err


async def test_a_plain_cluster_url_on_tls_nodes_hints_at_tls(tls_cluster_url: str) -> None:
    err, _ = await open_fails(tls_cluster_url)
    assert isinstance(err, StoreUnavailableError), err
    assert "Connection reset by peer" in str(err) or "Connection closed" in str(err), err
    assert "do they want TLS (ssl=true)?" in str(err) and "rediss://" not in str(err), err


def test_ssl_that_is_not_a_flag_is_refused_before_connecting() -> None:
    with pytest.raises(ValidationError, match="ssl='maybe' is not true or false"):
        RedisStateStore("redis+cluster://127.0.0.1:7000?ssl=maybe")
