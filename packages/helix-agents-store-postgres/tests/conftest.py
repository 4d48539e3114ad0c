"""Fixtures of the Postgres store's tests: a server, a fresh schema per test, PgBouncer.

The server is found in this order: ``$HELIX_POSTGRES_URL``; a local server on
the default port; local PostgreSQL binaries started here in a temporary
directory; otherwise the tests are skipped loudly (failed under
``HELIX_REQUIRE_BACKENDS=1``). There is no Docker engine to try here.
"""

from __future__ import annotations

import contextlib
import functools
import getpass
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from helix_agents.contract import backend_unavailable
from helix_agents.store_postgres import PoolSettings, PostgresStateStore, migrate

URL_ENV = "HELIX_POSTGRES_URL"
LOCAL_URLS = (
    "postgresql://127.0.0.1:5432/postgres",
    "postgresql://postgres@127.0.0.1:5432/postgres",
)
# Small pools: the contract opens two stores per test, and the tests open many.
SMALL_POOL = PoolSettings(min_size=1, max_size=4, timeout=10.0)


def _answers(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for(url: str, proc: subprocess.Popen[bytes], log: Path, what: str) -> None:
    """Wait until ``url`` answers, or fail naming ``what`` and its log."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{what} exited with {proc.returncode}: {log.read_text()}")
        if _answers(url):
            return
        time.sleep(0.2)
    pytest.fail(f"{what} did not answer on {url}")


def _as_postgres_user() -> list[str]:
    """A prefix running a command as the ``postgres`` OS user when we are root.

    PostgreSQL and PgBouncer refuse to run as root.
    """
    if os.geteuid() != 0:
        return []
    runuser = shutil.which("runuser")
    try:
        import pwd

        pwd.getpwnam("postgres")
    except KeyError:
        return []
    return [runuser, "-u", "postgres", "--"] if runuser else []


@contextlib.contextmanager
def _local_server() -> Iterator[str | None]:
    """Start PostgreSQL from local binaries in a temporary directory, if there are any."""
    found: str | None = shutil.which("initdb") or next(
        iter(sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)), None
    )
    prefix = _as_postgres_user()
    if found is None or (os.geteuid() == 0 and not prefix):
        yield None
        return
    bindir = Path(found).parent
    base = Path(tempfile.mkdtemp(prefix="helix-pg-"))
    os.chmod(base, 0o777)
    data, port = base / "data", free_port()
    subprocess.run(
        [*prefix, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"],
        check=True,
        capture_output=True,
    )
    log = base / "postgres.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                *prefix,
                str(bindir / "postgres"),
                "-D",
                str(data),
                "-p",
                str(port),
                "-k",
                str(base),
                "-c",
                "listen_addresses=127.0.0.1",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    try:
        wait_for(url, proc, log, "the local PostgreSQL server")
        yield url
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """The URL of a PostgreSQL server the tests may create schemas in."""
    env = os.environ.get(URL_ENV)
    if env:
        if not _answers(env):
            backend_unavailable(f"${URL_ENV}={env!r} does not answer")
        yield env
        return
    for url in LOCAL_URLS:
        if _answers(url):
            yield url
            return
    with _local_server() as started:
        if started is None:
            backend_unavailable(
                f"no PostgreSQL: set ${URL_ENV}, run a server on 127.0.0.1:5432, "
                "or install the server binaries (Debian: postgresql)"
            )
        assert started is not None
        yield started


@pytest.fixture
def anyio_backend() -> str:
    """The store runs on asyncio."""
    return "asyncio"


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
def pgbouncer_url(pg_url: str) -> Iterator[str]:
    """A PgBouncer in transaction pooling mode on loopback, in front of ``pg_url``."""
    binary = shutil.which("pgbouncer") or (
        "/usr/sbin/pgbouncer" if os.path.exists("/usr/sbin/pgbouncer") else None
    )
    if binary is None:
        backend_unavailable("no pgbouncer binary (Debian package: pgbouncer)")
    assert binary is not None
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
