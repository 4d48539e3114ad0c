"""Finding PostgreSQL for the tests, and servers they start from local binaries: plain,
with passwords, with TLS.

PostgreSQL refuses to run as root; as root the server runs as the ``postgres``
OS user. A test can freeze a whole server (``SIGSTOP`` to the postmaster and
every backend: its TCP port still accepts, nothing answers) and thaw it again.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

from helix_agents.core.backend import redact_url

from ._docker import in_container
from ._search import Outcome, Search, Step, search

__all__ = [
    "POSTGRES_ENV",
    "POSTGRES_URLS",
    "Server",
    "TLSFiles",
    "answers",
    "find_postgres",
    "free_port",
    "start_server",
    "wait_for",
]

POSTGRES_ENV = "HELIX_POSTGRES_URL"
POSTGRES_URLS = (
    "postgresql://127.0.0.1:5432/postgres",
    "postgresql://postgres@127.0.0.1:5432/postgres",
)


def answers(url: str) -> bool:
    """Whether a PostgreSQL server answers at ``url``."""
    import psycopg

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
        if answers(url):
            return
        time.sleep(0.2)
    pytest.fail(f"{what} did not answer on {url}")


def as_postgres_user() -> list[str] | None:
    """A prefix running a command as the ``postgres`` OS user when we are root.

    ``[]`` when we are not root; ``None`` when we are root and cannot switch.
    """
    if os.geteuid() != 0:
        return []
    runuser = shutil.which("runuser")
    try:
        import pwd

        pwd.getpwnam("postgres")
    except KeyError:
        return None
    return [runuser, "-u", "postgres", "--"] if runuser else None


def _give_to_server_user(path: Path, mode: int) -> None:
    os.chmod(path, mode)
    if os.geteuid() == 0:
        shutil.chown(path, "postgres")


@dataclass(frozen=True)
class TLSFiles:
    """A server certificate and key for 127.0.0.1, and the CA certificate that signed them."""

    ca: Path
    cert: Path
    key: Path


@dataclass
class Server:
    """A running private server: its URL (password included) and its processes."""

    url: str
    host: str
    port: int
    password: str | None
    proc: subprocess.Popen[bytes]
    data: Path
    socket_dir: Path
    stopped: list[int] = field(default_factory=list)

    def url_as(self, user: str, password: str | None, dbname: str = "postgres") -> str:
        """A URL to this server as ``user`` with ``password``."""
        auth = quote(user) + (f":{quote(password, safe='')}" if password is not None else "")
        return f"postgresql://{auth}@{self.host}:{self.port}/{dbname}"

    def freeze(self) -> None:
        """Stop every process of the server: connections stay up, nothing answers."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        os.kill(postmaster, signal.SIGSTOP)  # first: it forks no backend after this
        self.stopped.append(postmaster)
        for child in _children(postmaster):  # each backend leads a session of its own
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGSTOP)
                self.stopped.append(child)

    def thaw(self) -> None:
        """Let a frozen server run again."""
        while self.stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.stopped.pop(), signal.SIGCONT)
        # runuser stops itself when its child stops, and stays stopped after the child resumes.
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGCONT)

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """The server frozen for the block, thawed after it whatever happens."""
        self.freeze()
        try:
            yield
        finally:
            self.thaw()


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            # "pid (comm) state ppid ...": comm may hold spaces, so split after its ')'.
            if int(stat.read_text().rpartition(")")[2].split()[1]) == pid:
                found.append(int(stat.parent.name))
    return found


def _initdb(path: str | None = None) -> Path | None:
    """The directory of ``initdb``: on ``path`` (default ``$PATH``, then Debian's
    ``/usr/lib/postgresql/*/bin``)."""
    found = shutil.which("initdb", path=path)
    if found is None and path is None:
        found = next(
            iter(sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)), None
        )
    return None if found is None else Path(found).parent


@contextlib.contextmanager
def start_server(
    *, password: str | None = None, tls: TLSFiles | None = None, path: str | None = None
) -> Iterator[Server | None]:
    """A server on a free loopback port, or ``None`` without binaries to start one.

    With ``password``, TCP connections authenticate with SCRAM as ``postgres``
    (the Unix socket stays trusted); with ``tls``, the server offers TLS.
    ``path`` is where to look for ``initdb`` (see :func:`find_postgres`).
    """
    bindir, prefix = _initdb(path), as_postgres_user()
    if bindir is None or prefix is None:
        yield None
        return
    base = Path(tempfile.mkdtemp(prefix="helix-pg-"))
    os.chmod(base, 0o777)
    data, port = base / "data", free_port()
    initdb = [*prefix, str(bindir / "initdb"), "-D", str(data), "-U", "postgres"]
    if password is None:
        initdb += ["-A", "trust"]
    else:
        pwfile = base / "pwfile"
        pwfile.write_text(password + "\n")
        _give_to_server_user(pwfile, 0o600)
        initdb += ["--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={pwfile}"]
    subprocess.run(initdb, check=True, capture_output=True)
    command = [*prefix, str(bindir / "postgres"), "-D", str(data), "-p", str(port), "-k", str(base)]
    command += ["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"]
    if tls is not None:
        cert, key = base / "server.pem", base / "server.key"  # where the server's user can read
        for source, copy in ((tls.cert, cert), (tls.key, key)):
            shutil.copyfile(source, copy)
            _give_to_server_user(copy, 0o600)
        command += ["-c", "ssl=on", "-c", f"ssl_cert_file={cert}", "-c", f"ssl_key_file={key}"]
    log = base / "postgres.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, to freeze as one
        )
    server = Server("", "127.0.0.1", port, password, proc, data, base)
    server.url = server.url_as("postgres", password)
    try:
        wait_for(server.url, proc, log, "the private PostgreSQL server")
        yield server
    finally:
        server.thaw()
        with contextlib.suppress(OSError, ValueError):  # fast shutdown: no waiting for clients
            os.kill(int((data / "postmaster.pid").read_text().split()[0]), signal.SIGINT)
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(base, ignore_errors=True)


def _from_env(stack: ExitStack) -> Outcome:
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        return Outcome(None, "not set")
    if answers(url):
        return Outcome(url)
    return Outcome(None, f"{redact_url(url)} does not answer", final=True)


def find_postgres(
    stack: ExitStack,
    *,
    local_urls: Sequence[str] = POSTGRES_URLS,
    path: str | None = None,
    docker: bool = True,
) -> Search:
    """A PostgreSQL server the tests may create schemas in, found in the order of
    CONTRIBUTING.md: ``$HELIX_POSTGRES_URL`` (used alone when set), ``local_urls``,
    a server started from the binaries on ``path``, a Docker container.

    What it starts is stopped when ``stack`` closes.
    """

    def local(stack: ExitStack) -> Outcome:
        url = next((url for url in local_urls if answers(url)), None)
        return Outcome(url, "nothing answers")

    def binaries(stack: ExitStack) -> Outcome:
        if _initdb(path) is None:
            where = "$PATH" if path is None else path
            return Outcome(None, f"no initdb on {where} (Debian: apt install postgresql)")
        if as_postgres_user() is None:
            return Outcome(None, "running as root without a postgres OS user to run it as")
        server = stack.enter_context(start_server(path=path))
        return Outcome(None if server is None else server.url, "did not start")

    ports = ", ".join(sorted({urlsplit(u).netloc.rpartition("@")[2] for u in local_urls}))
    steps: list[tuple[str, Step]] = [
        (f"${POSTGRES_ENV}", _from_env),
        (f"local server ({ports or 'none'})", local),
        ("local binaries", binaries),
    ]
    if docker:
        steps.append(("Docker", lambda stack: in_container("postgres", stack)))
    return search("PostgreSQL", steps, stack)
