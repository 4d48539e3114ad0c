"""TLS on loopback with a throwaway CA: it works when configured, and each mistake says TLS.

A TLS setting the server cannot meet is ``StoreMisconfiguredError``, at once,
with "TLS/SSL" in the message — not a pool timeout.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import quote

import pytest
import trustme

from helix_agents.contract.servers import Server, TLSFiles
from helix_agents.core import StateStoreError, open_store
from helix_agents.core.errors import StoreMisconfiguredError
from helix_agents.store_postgres import PostgresStateStore

from .no_secrets import assert_not_shown
from .speaking import says

pytestmark = pytest.mark.anyio

FAST = 5.0


def _tls_url(server: Server, sslmode: str, rootcert: Path | None = None) -> str:
    url = f"{server.url}?sslmode={sslmode}"
    return url if rootcert is None else f"{url}&sslrootcert={quote(str(rootcert))}"


@pytest.fixture
def no_default_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """libpq finds no root certificate of its own (``~/.postgresql/root.crt``)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("PGSSLROOTCERT", raising=False)


Refused = Callable[[Server, str], Awaitable[tuple[StateStoreError, float]]]


@pytest.fixture
def refused(caplog: pytest.LogCaptureFixture) -> Refused:
    """``await refused(server, url)``: the error opening a store raised, and how long it took.

    The server's password shows in neither the error nor a log record.
    """
    caplog.set_level(logging.DEBUG)

    async def attempt(server: Server, url: str) -> tuple[StateStoreError, float]:
        started = time.monotonic()
        with pytest.raises(StateStoreError) as caught:
            async with open_store(url, namespace=f"helix_tls_{uuid.uuid4().hex[:8]}"):
                pass
        took = time.monotonic() - started
        assert server.password is not None
        assert_not_shown(server.password, error=caught.value, records=caplog.records)
        return caught.value, took

    return attempt


async def test_tls_verify_full_with_the_servers_ca_works(
    tls_pg: Server, tls_files: TLSFiles
) -> None:
    """The store's connections use TLS, verified against the CA given as ``sslrootcert``."""
    url = _tls_url(tls_pg, "verify-full", tls_files.ca)
    schema = f"helix_tls_{uuid.uuid4().hex[:8]}"
    async with open_store(url, namespace=schema, auto_migrate=True) as store:
        assert isinstance(store, PostgresStateStore)
        await store.create_session("s")
        assert (await store.get_session("s")) is not None
        async with store.pool.connection() as conn:
            assert conn.pgconn.ssl_in_use
            cur = await conn.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            assert await cur.fetchone() == (True,)


@pytest.mark.usefixtures("no_default_root")
async def test_tls_verify_full_without_a_root_certificate_is_misconfigured(
    tls_pg: Server, refused: Refused
) -> None:
    """No CA to verify the server with: refused at once, and the message says TLS."""
    error, took = await refused(tls_pg, _tls_url(tls_pg, "verify-full"))
    assert took < FAST
    assert isinstance(error, StoreMisconfiguredError) and not error.retryable
    assert "TLS/SSL" in str(error)
    says(error, "root certificate")


async def test_tls_with_a_certificate_of_another_ca_is_misconfigured(
    tls_pg: Server, tmp_path: Path, refused: Refused
) -> None:
    """The server's certificate does not verify against the CA given."""
    other = tmp_path / "other-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(other))
    error, took = await refused(tls_pg, _tls_url(tls_pg, "verify-full", other))
    assert took < FAST
    assert isinstance(error, StoreMisconfiguredError)
    assert "TLS/SSL" in str(error)
    assert "certificate verify failed" in str(error)


async def test_tls_required_of_a_server_without_tls_is_misconfigured(
    private_pg: Server, refused: Refused
) -> None:
    """``sslmode=require`` against a server that offers no TLS."""
    error, took = await refused(private_pg, _tls_url(private_pg, "require"))
    assert took < FAST
    assert isinstance(error, StoreMisconfiguredError)
    assert "TLS/SSL" in str(error)
    says(error, "does not support SSL")
