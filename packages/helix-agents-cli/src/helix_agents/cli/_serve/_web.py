"""The inspector's ASGI app: routes, the guard, and store errors shown as pages
(docs/inspector.md)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from helix_agents.core import (
    SessionNotFoundError,
    SessionStateStore,
    StateStoreError,
    StoreUnavailableError,
)
from helix_agents.core import ValidationError as StoreValidationError
from helix_agents.core.backend import redact_url
from helix_agents.core.context import OutputNotFoundError
from helix_agents.core.errors import ApprovalNotFoundError

from . import _actions, _live, _pages
from ._guard import Guard
from ._inspector import Inspector, render

__all__ = ["inspector_app"]


def _status(exc: StateStoreError) -> int:
    if isinstance(exc, SessionNotFoundError | OutputNotFoundError | ApprovalNotFoundError):
        return 404
    if isinstance(exc, StoreValidationError):
        return 400
    if isinstance(exc, StoreUnavailableError):
        return 503
    return 500


async def _store_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StateStoreError)
    return render(
        request,
        "error.html",
        _status(exc),
        message=redact_url(str(exc)),
        code=exc.code,
    )


def inspector_app(store: SessionStateStore, *, url: str, write: bool) -> Starlette:
    """The inspector over an open ``store`` (the caller closes it); ``url`` is only shown,
    through ``redact_url`` (INS-12). Without ``write`` every action answers 405 (INS-8)."""
    routes = [
        Route("/", _pages.sessions_page),
        # Ids travel in the query string: a session or checkpoint id may hold any character.
        Route("/session", _pages.session_page),
        Route("/session/records", _pages.records_page),
        Route("/session/window", _pages.window_page),
        Route("/session/checkpoint", _pages.checkpoint_page),
        Route("/session/output", _pages.output_page),
        Route("/session/history", _pages.history_page),
        Route("/session/events", _live.events),
        Mount("/static", StaticFiles(packages=[("helix_agents.cli._serve", "static")])),
        *_actions.routes(write=write),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(Guard)],
        exception_handlers={StateStoreError: _store_error},
    )
    app.state.inspector = Inspector(store, redact_url(url), write)
    return app
