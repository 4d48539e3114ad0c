"""Opening a session page of the inspector (``helix-store serve``, docs/inspector.md INS-14,
INS-18): the app called in process, over the bench's store, without a socket or an HTTP
client. One app per store, as one served process has: its templates compile once, on the
first page, not in every sample."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any
from urllib.parse import urlencode
from weakref import WeakKeyDictionary

from helix_agents.cli._serve import inspector_app

__all__ = ["open_session_page"]

_APPS: WeakKeyDictionary[Any, Any] = WeakKeyDictionary()


async def open_session_page(store: Any, session_id: str) -> None:
    """GET the page of ``session_id`` (its latest rows) once; fail unless it answers 200."""
    app = _APPS.get(store)
    if app is None:
        app = _APPS[store] = inspector_app(store, url="bench://", write=False)
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/session",
        "raw_path": b"/session",
        "query_string": urlencode({"id": session_id}).encode(),
        "headers": [(b"host", b"127.0.0.1")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    status: list[int] = []

    async def receive() -> MutableMapping[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])

    await app(scope, receive, send)
    assert status == [200], status
