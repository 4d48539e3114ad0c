"""Running the inspector: the store opened as the mode needs, a loopback socket, uvicorn
(INS-8, INS-11, INS-12)."""

from __future__ import annotations

import socket

import uvicorn

from helix_agents.core import open_store
from helix_agents.core.backend import redact_url

from .._open import open_reading
from ._web import inspector_app

__all__ = ["HOST", "serve_store"]

HOST = "127.0.0.1"


def _socket(port: int) -> socket.socket:
    """A listening socket on loopback: bound here, so ``--port 0`` can say the port it got."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    return sock


async def serve_store(url: str, *, port: int, write: bool) -> None:
    """Serve the inspector over the store at ``url`` until interrupted; read-only (a SQLite
    file opened read-only, no action routes) unless ``write``."""
    store = open_store(url) if write else open_reading(url)
    async with store:
        app = inspector_app(store, url=url, write=write)
        sock = _socket(port)
        config = uvicorn.Config(
            app,
            log_level="warning",
            # Open event streams end within a second of an interrupt.
            timeout_graceful_shutdown=1,
            server_header=False,
        )
        mode = "read-write" if write else "read-only"
        print(
            f"helix-store: serving {redact_url(url)} ({mode}) on "
            f"http://{HOST}:{sock.getsockname()[1]}/ (Ctrl-C stops)",
            flush=True,
        )
        try:
            await uvicorn.Server(config).serve(sockets=[sock])
        finally:
            sock.close()
