"""The last resort: Postgres and Redis in Docker containers (testcontainers), when an
engine answers. Nothing here imports testcontainers until a container is started."""

from __future__ import annotations

import os
import socket
from contextlib import ExitStack
from urllib.parse import urlsplit

from ._search import Outcome

__all__ = ["POSTGRES_IMAGE", "REDIS_IMAGE", "docker_answers", "docker_host", "in_container"]

POSTGRES_IMAGE = "postgres:17-alpine"
REDIS_IMAGE = "redis:7-alpine"
_NO_TESTCONTAINERS = (
    "an engine answers at {host}, but testcontainers is not installed "
    "(uv sync --all-packages --group containers)"
)


def docker_host() -> str:
    """Where the Docker engine is asked: ``$DOCKER_HOST``, else the default Unix socket."""
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def docker_answers(host: str | None = None, timeout: float = 2.0) -> bool:
    """Whether a Docker engine answers ``GET /_ping`` at ``host`` (``unix://`` or ``tcp://``)."""
    parts = urlsplit(host or docker_host())
    try:
        if parts.scheme == "unix":
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        elif parts.scheme in ("tcp", "http") and parts.hostname:
            sock = socket.create_connection((parts.hostname, parts.port or 2375), timeout)
        else:
            return False
        with sock:
            if parts.scheme == "unix":
                sock.settimeout(timeout)
                sock.connect(parts.path)
            sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            status = sock.recv(64).split(b"\r\n", 1)[0].split()
    except OSError:
        return False
    return len(status) >= 2 and status[0].startswith(b"HTTP/") and status[1] == b"200"


def in_container(kind: str, stack: ExitStack) -> Outcome:
    """A ``kind`` (``postgres`` or ``redis``) server in a container stopped with ``stack``."""
    host = docker_host()
    if not docker_answers(host):
        return Outcome(None, f"no engine answers at {host}")
    try:
        import testcontainers  # noqa: F401
    except ImportError:
        return Outcome(None, _NO_TESTCONTAINERS.format(host=host))
    if kind == "postgres":
        from testcontainers.community.postgres import PostgresContainer

        pg = stack.enter_context(PostgresContainer(POSTGRES_IMAGE, driver=None))
        return Outcome(pg.get_connection_url())
    from testcontainers.community.redis import RedisContainer

    redis = stack.enter_context(RedisContainer(REDIS_IMAGE))
    return Outcome(f"redis://{redis.get_container_host_ip()}:{redis.get_exposed_port(6379)}/0")
