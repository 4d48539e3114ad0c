"""The write actions, live only under ``--write`` (INS-8): each POST checked for its
CSRF token and origin (INS-10), then one call of the store's protocol (INS-9)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import get_args
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from helix_agents.core import ContextItem, StoredContextItem, ValidationError
from helix_agents.core.messages import ContextKind

from ._guard import same_origin_form
from ._inspector import inspector_of, render

__all__ = ["routes"]

Action = Callable[[Request, dict[str, str]], Awaitable[Response]]


def _back(sid: str | None, notice: str) -> RedirectResponse:
    query = {"notice": notice} if sid is None else {"id": sid, "notice": notice}
    path = "/" if sid is None else "/session"
    return RedirectResponse(f"{path}?{urlencode(query)}", status_code=303)


def _field(form: dict[str, str], name: str) -> str:
    value = form.get(name, "")
    if not value:
        raise ValidationError(f"the form lacks {name!r}")
    return value


def _confirmed(form: dict[str, str], sid: str) -> None:
    if form.get("confirm") != sid:
        raise ValidationError("not confirmed: type the session id to confirm; nothing changed")


async def _resolve(request: Request, form: dict[str, str]) -> Response:
    sid = _field(form, "id")
    outcome = await inspector_of(request).store.resolve_approval(sid, _field(form, "approval"))
    return _back(sid, outcome)


async def _record_item(request: Request, form: dict[str, str]) -> Response:
    sid = _field(form, "id")
    kind = _field(form, "kind")
    if kind not in get_args(ContextKind):
        raise ValidationError(f"unknown context kind {kind!r}")
    item = ContextItem.model_validate({"kind": kind, "content": _field(form, "content")})
    record = StoredContextItem(key=_field(form, "key"), item=item, at=datetime.now(UTC))
    done = await inspector_of(request).store.record_context_item(sid, record)
    return _back(sid, "recorded" if done.recorded else "already-recorded")


async def _clear(request: Request, form: dict[str, str]) -> Response:
    sid = _field(form, "id")
    _confirmed(form, sid)
    await inspector_of(request).store.clear_session(sid)
    return _back(sid, "cleared")


async def _delete(request: Request, form: dict[str, str]) -> Response:
    sid = _field(form, "id")
    _confirmed(form, sid)
    gone = await inspector_of(request).store.delete_session(sid)
    return _back(None, f"deleted {sid}" if gone else f"already gone {sid}")


def _checked(action: Action) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        form = await same_origin_form(request, inspector_of(request).token)
        if form is None:
            return render(
                request,
                "error.html",
                403,
                message="refused: the form lacks this page's token or comes from elsewhere",
                code="forbidden",
            )
        return await action(request, form)

    return endpoint


async def _read_only(request: Request) -> Response:
    return render(
        request,
        "error.html",
        405,
        message="this inspector is read-only: start it with `helix-store serve URL --write`",
        code="read_only",
    )


def routes(*, write: bool) -> list[Route]:
    """The action routes, POST only; without ``write`` each answers 405 and does nothing."""
    return [
        Route(path, _checked(action) if write else _read_only, methods=["POST"])
        for path, action in (
            ("/session/approval", _resolve),
            ("/session/context-item", _record_item),
            ("/session/clear", _clear),
            ("/session/delete", _delete),
        )
    ]
