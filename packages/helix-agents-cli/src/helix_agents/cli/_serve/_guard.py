"""What keeps the inspector local and its forms unforgeable (docs/inspector.md, Security):
loopback ``Host`` names only (INS-11), a CSRF token and a same-origin check on every POST
(INS-10), and headers that let a page run only the server's own script (INS-13)."""

from __future__ import annotations

import hmac
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["LOOPBACK_NAMES", "Guard", "same_origin_form"]

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost"})

_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    # same-origin, not no-referrer: with no-referrer a form POST carries `Origin: null`.
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}


def _host_name(host: str) -> str:
    return host.rpartition(":")[0] if ":" in host else host


class Guard:
    """ASGI middleware: refuse a non-loopback ``Host`` (400), add the security headers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the request's ``Host``, then run the app with the headers added."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = Headers(scope=scope).get("host", "")
        if _host_name(host).lower() not in LOOPBACK_NAMES:
            await send({"type": "http.response.start", "status": 400, "headers": []})
            await send({"type": "http.response.body", "body": b"loopback host names only"})
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in _HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, secured)


async def same_origin_form(request: Request, token: str) -> dict[str, str] | None:
    """The POSTed form when it carries ``token`` and comes from this origin, else ``None``."""
    origin = request.headers.get("origin")
    if origin is not None:
        parts = urlsplit(origin)
        if parts.netloc.lower() != request.headers.get("host", "").lower():
            return None
    form = await request.form()
    values = {k: v for k, v in form.items() if isinstance(v, str)}
    if not hmac.compare_digest(values.get("csrf", ""), token):
        return None
    return values
