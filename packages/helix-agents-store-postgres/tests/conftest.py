"""Fixtures of the Postgres store's tests: servers, a fresh schema per test, PgBouncer.

The shared server comes from the shared finder (``helix_agents.contract.servers``, in
the order of CONTRIBUTING.md): ``$HELIX_POSTGRES_URL``; a local server on the default
port; local PostgreSQL binaries started in a temporary directory; a Docker container
when an engine answers; otherwise the tests are skipped loudly (failed under
``HELIX_REQUIRE_BACKENDS=1``).

The fault and TLS tests need servers of their own, which they may freeze or
which ask for a password or offer TLS: those always start from local binaries.
"""

from __future__ import annotations

import functools
import getpass
import os
import re
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import trustme
from psycopg import sql

from helix_agents.contract import backend_unavailable
from helix_agents.contract.servers import Server, TLSFiles, free_port, start_server, wait_for
from helix_agents.store_postgres import PoolSettings, PostgresStateStore, migrate

NO_BINARIES = (
    "no PostgreSQL server binaries to start a private server (Debian: postgresql); "
    "the fault and TLS tests need one"
)
# Small pools: the contract opens two stores per test, and the tests open many.
SMALL_POOL = PoolSettings(min_size=1, max_size=4, timeout=10.0)


@pytest.fixture(scope="session")
def pg_url(helix_postgres_url: str) -> str:
    """The URL of a PostgreSQL server the tests may create schemas in."""
    return helix_postgres_url


PRIVATE_PASSWORD = "s3cret-Pw:@/%?&="  # URL metacharacters: it must survive quoting


@pytest.fixture(scope="session")
def private_pg() -> Iterator[Server]:
    """A server of the tests' own that asks for a password over TCP; tests may freeze it."""
    with start_server(password=PRIVATE_PASSWORD) as server:
        if server is None:
            backend_unavailable(NO_BINARIES)
        assert server is not None
        yield server


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TLSFiles:
    """A throwaway CA, and a certificate it signed for 127.0.0.1 and localhost."""
    ca = trustme.CA()
    issued = ca.issue_cert("127.0.0.1", "localhost")
    base = tmp_path_factory.mktemp("tls")
    files = TLSFiles(ca=base / "ca.pem", cert=base / "server.pem", key=base / "server.key")
    ca.cert_pem.write_to_path(str(files.ca))
    issued.cert_chain_pems[0].write_to_path(str(files.cert))
    issued.private_key_pem.write_to_path(str(files.key))
    return files


@pytest.fixture(scope="session")
def tls_pg(tls_files: TLSFiles) -> Iterator[Server]:
    """A server of the tests' own that offers TLS with ``tls_files`` and asks for a password."""
    with start_server(password=PRIVATE_PASSWORD, tls=tls_files) as server:
        if server is None:
            backend_unavailable(NO_BINARIES)
        assert server is not None
        yield server


@pytest.fixture
def schema(pg_url: str) -> Iterator[str]:
    """A schema name no other test uses; the schema is dropped after the test."""
    name = f"helix_test_{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


@pytest.fixture
async def migrated(pg_url: str, schema: str) -> str:
    """``schema``, migrated to the latest version."""
    async with await psycopg.AsyncConnection.connect(pg_url) as conn:
        await migrate(conn, schema)
    return schema


@pytest.fixture
def store_on(migrated: str) -> Callable[..., PostgresStateStore]:
    """``store_on(url, **options)``: a store (not entered) on the test's migrated schema."""

    def factory(url: str, **options: Any) -> PostgresStateStore:
        options.setdefault("pool_settings", SMALL_POOL)
        return PostgresStateStore(url, schema=migrated, **options)

    return factory


@pytest.fixture
def open_store(pg_url: str, store_on: Callable[..., PostgresStateStore]) -> Any:
    """A factory of stores (not entered) on the test's migrated schema, straight to the server."""
    return functools.partial(store_on, pg_url)


@pytest.fixture(scope="session")
def pgbouncer_binary() -> tuple[str, tuple[int, int]]:
    """The ``pgbouncer`` binary and its version (major, minor)."""
    binary = shutil.which("pgbouncer") or (
        "/usr/sbin/pgbouncer" if os.path.exists("/usr/sbin/pgbouncer") else None
    )
    if binary is None:
        backend_unavailable("no pgbouncer binary (Debian package: pgbouncer)")
    assert binary is not None
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True)
    found = re.search(r"PgBouncer (\d+)\.(\d+)", out.stdout)
    assert found is not None, f"no version in {out.stdout!r}"
    return binary, (int(found.group(1)), int(found.group(2)))


@pytest.fixture(scope="session")
def pgbouncer_prepare(pgbouncer_binary: tuple[str, tuple[int, int]]) -> str:
    """The store's ``prepare`` behind :func:`pgbouncer_url`, as docs/backends/postgres.md
    says: ``auto`` from PgBouncer 1.21 on (it keeps prepared statements), else ``off``."""
    return "auto" if pgbouncer_binary[1] >= (1, 21) else "off"


@pytest.fixture(scope="session")
def pgbouncer_url(pg_url: str, pgbouncer_binary: tuple[str, tuple[int, int]]) -> Iterator[str]:
    """A PgBouncer in transaction pooling mode on loopback, in front of ``pg_url``; from
    1.21 on it keeps prepared statements (``max_prepared_statements``)."""
    binary, version = pgbouncer_binary
    target = psycopg.conninfo.conninfo_to_dict(pg_url)
    user = str(target.get("user") or getpass.getuser())
    base = Path(tempfile.mkdtemp(prefix="helix-pgbouncer-"))
    os.chmod(base, 0o755)  # readable by the unprivileged user PgBouncer switches to
    port = free_port()
    server = " ".join(f"{k}={v}" for k, v in target.items() if k != "dbname")
    (base / "users.txt").write_text(f'"{user}" ""\n')
    (base / "pgbouncer.ini").write_text(
        "[databases]\n"
        f"helix = {server} dbname={target.get('dbname', 'postgres')}\n"
        "[pgbouncer]\n"
        f"listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {base / 'users.txt'}\n"
        "pool_mode = transaction\nmax_client_conn = 500\ndefault_pool_size = 20\n"
        "ignore_startup_parameters = extra_float_digits\n"
        "log_connections = 0\nlog_disconnections = 0\n"
        + ("max_prepared_statements = 200\n" if version >= (1, 21) else "")
        # PgBouncer refuses to run as root; as root, it drops to the postgres user.
        + ("user = postgres\n" if os.geteuid() == 0 else "")
    )
    log = base / "pgbouncer.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [binary, str(base / "pgbouncer.ini")], stdout=out, stderr=subprocess.STDOUT
        )
    url = f"postgresql://{user}@127.0.0.1:{port}/helix"
    try:
        wait_for(url, proc, log, "pgbouncer")
        yield url
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(base, ignore_errors=True)
