"""Connection failures: fast, with the server's reason, the right retry advice, no password shown.

A refusal retrying cannot fix (authentication, unknown database or role, not a
PostgreSQL server) is ``StoreMisconfiguredError``; one that may pass
(refused port, unknown host) is ``StoreUnavailableError``. Either comes well
before the pool's 30 s timeout, where psycopg_pool alone would only say
"PoolTimeout: pool initialization incomplete".
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from psycopg import sql

from helix_agents.contract.servers import Server, free_port
from helix_agents.core import StateStoreError, StoreUnavailableError, open_store
from helix_agents.core.errors import StoreMisconfiguredError
from helix_agents.store_postgres import PoolSettings, PostgresStateStore

from .no_secrets import assert_not_shown
from .speaking import GERMAN, says

pytestmark = pytest.mark.anyio

FAST = 5.0  # seconds: the promise is "well under" this


async def _refused(url: str, **options: Any) -> tuple[StateStoreError, float]:
    started = time.monotonic()
    with pytest.raises(StateStoreError) as caught:
        async with open_store(url, **options):
            pass
    return caught.value, time.monotonic() - started


async def test_a_wrong_password_fails_fast_naming_the_cause(
    private_pg: Server, caplog: pytest.LogCaptureFixture
) -> None:
    """Misconfigured (not retryable), in well under 5 s, the server's reason, no password."""
    wrong = "Wr0ng-Secret:@/%"
    caplog.set_level(logging.DEBUG)
    error, took = await _refused(private_pg.url_as("postgres", wrong))
    assert took < FAST
    assert isinstance(error, StoreMisconfiguredError)
    assert (error.code, error.retryable) == ("state_misconfigured", False)
    assert "(authentication)" in str(error)
    says(error, "password authentication failed")
    assert isinstance(error.__cause__, psycopg.OperationalError)
    says(error.__cause__, "password authentication failed")
    assert_not_shown(wrong, error=error, records=caplog.records)


@pytest.mark.parametrize(
    ("user", "dbname", "reason"),
    [
        ("postgres", "no_such_db", 'database "no_such_db" does not exist'),
        ("no_such_role", "postgres", 'role "no_such_role" does not exist'),
    ],
)
async def test_an_unknown_database_or_role_is_misconfigured(
    private_pg: Server, user: str, dbname: str, reason: str
) -> None:
    """The server's FATAL reason, not retryable (over the trusted socket, so the role shows)."""
    url = f"postgresql://{user}@/{dbname}?host={private_pg.socket_dir}&port={private_pg.port}"
    error, took = await _refused(url)
    assert took < FAST
    assert isinstance(error, StoreMisconfiguredError)
    assert "(unknown database or role)" in str(error)
    says(error, reason)


async def test_a_role_out_of_connection_slots_is_unavailable_in_english(private_pg: Server) -> None:
    """SQLSTATE 53300 after the password: transient, told by the English text only.

    With a server speaking another language nothing tells it from a refused
    password: it is misconfigured then, as docs/backends/postgres.md says.
    """
    role, password = f"app_{uuid.uuid4().hex[:8]}", "Slot-Secret-9"
    async with await psycopg.AsyncConnection.connect(private_pg.url, autocommit=True) as admin:
        await admin.execute(
            sql.SQL("CREATE ROLE {} LOGIN CONNECTION LIMIT 0 PASSWORD {}").format(
                sql.Identifier(role), sql.Literal(password)
            )
        )
    error, took = await _refused(private_pg.url_as(role, password))
    assert took < FAST
    expected = StoreMisconfiguredError if GERMAN else StoreUnavailableError
    assert isinstance(error, expected), error
    says(error, "too many connections")


async def test_no_password_for_a_server_that_asks_is_misconfigured(private_pg: Server) -> None:
    """libpq's own refusal to go on without a password."""
    error, took = await _refused(private_pg.url_as("postgres", None))
    assert took < FAST
    assert isinstance(error, StoreMisconfiguredError)
    assert "(authentication)" in str(error)
    if not GERMAN:  # libpq leaves "fe_sendauth: no password supplied" untranslated
        assert "no password supplied" in str(error)


async def test_a_refused_port_is_unavailable_and_fast() -> None:
    """Nothing listens: retryable, in well under the pool timeout, saying so."""
    error, took = await _refused(f"postgresql://app:pw-1234@127.0.0.1:{free_port()}/db")
    assert took < FAST
    assert isinstance(error, StoreUnavailableError) and error.retryable
    assert error.may_have_landed is False
    says(error, "Connection refused")
    assert_not_shown("pw-1234", error=error)


async def test_a_refused_port_is_unavailable_whatever_the_names() -> None:
    """A role and database named like words of libpq's message do not read as the server's refusal.

    (The store takes a server refusal that names the conninfo's database or role
    as misconfigured, whatever its language.)
    """
    error, took = await _refused(f"postgresql://server:pw-1234@127.0.0.1:{free_port()}/running")
    assert took < FAST
    assert isinstance(error, StoreUnavailableError) and error.retryable


async def test_an_unknown_host_is_unavailable_and_fast() -> None:
    """A name DNS does not know (``.invalid`` never resolves): retryable, named.

    The name itself reads like a TLS or authentication problem: it must not fool the store.
    """
    host = "ssl-error-certificate-authentication-failed.invalid"
    error, took = await _refused(f"postgresql://app:pw-1234@{host}/db")
    assert took < FAST
    assert isinstance(error, StoreUnavailableError) and error.retryable
    assert host in str(error)
    assert_not_shown("pw-1234", error=error)


@pytest.fixture
async def greeting_server() -> AsyncIterator[int]:
    """A server that is not PostgreSQL: it greets first, like SMTP or FTP, then hangs up."""

    async def greet(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"220 mail.example ESMTP ready\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(greet, "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1]


@pytest.mark.parametrize("sslmode", ["prefer", "disable"])
async def test_a_server_that_is_not_postgres_is_misconfigured(
    greeting_server: int, sslmode: str
) -> None:
    """Whatever libpq asks first (TLS or startup), the answer is not PostgreSQL's."""
    url = f"postgresql://app@127.0.0.1:{greeting_server}/db?sslmode={sslmode}"
    error, took = await _refused(url)
    assert took < FAST
    assert isinstance(error, StoreMisconfiguredError)
    assert "not a PostgreSQL server" in str(error)


async def test_a_password_changed_after_open_is_misconfigured_and_never_logged(
    private_pg: Server, caplog: pytest.LogCaptureFixture
) -> None:
    """The pool's reconnects are refused: the call ends in time with the server's reason."""
    role, old, new = f"app_{uuid.uuid4().hex[:8]}", "Old-Secret-9:@", "New-Secret-9:@"
    async with await psycopg.AsyncConnection.connect(private_pg.url, autocommit=True) as admin:
        await admin.execute(
            sql.SQL("CREATE ROLE {} LOGIN SUPERUSER PASSWORD {}").format(
                sql.Identifier(role), sql.Literal(old)
            )
        )
        caplog.set_level(logging.DEBUG)
        settings = PoolSettings(min_size=1, max_size=1, connect_timeout=1.0)
        store = PostgresStateStore(
            private_pg.url_as(role, old),
            schema=f"helix_pw_{uuid.uuid4().hex[:8]}",
            auto_migrate=True,
            pool_settings=settings,
            operation_timeout=1.0,
        )
        async with store:
            await store.create_session("s")
            await admin.execute(
                sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(role), sql.Literal(new))
            )
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [role]
            )
            # The read finds its connection killed, retries, and waits for a new one in vain.
            started = time.monotonic()
            with pytest.raises(StoreMisconfiguredError) as caught:
                await store.get_session("s")
            assert time.monotonic() - started < 1.0 + 1.0
            assert caught.value.session_id == "s"
            assert "(authentication)" in str(caught.value)
            says(caught.value, "password authentication failed")
            assert role in repr(store)
            assert_not_shown(old, error=caught.value, records=caplog.records, texts=[repr(store)])
        failed = [
            r
            for r in caplog.records
            if role in r.getMessage() and "error connecting" in r.getMessage()
        ]
        assert failed, "the pool logs why it cannot connect"
        assert_not_shown(new, records=caplog.records)
