"""What every request of one inspector shares, and pages rendered from its templates
(docs/inspector.md)."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from jinja2 import Environment, PackageLoader
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from helix_agents.core import SessionStateStore

from .._render import when

__all__ = ["CLIP_CHARS", "Inspector", "inspector_of", "render"]

CLIP_CHARS = 4_000


def _pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _clip(text: str) -> str:
    """A long row cut for the page; the whole row stays in the store (and its export)."""
    if len(text) <= CLIP_CHARS:
        return text
    return f"{text[:CLIP_CHARS]}… ({len(text) - CLIP_CHARS:,} more characters)"


def _visible(checkpoint_id: str) -> str:
    return checkpoint_id.replace("\x1f", "␟")  # U+001F shown as the symbol naming it


def _templates() -> Jinja2Templates:
    # autoescape=True for every template, whatever its name (INS-13).
    env = Environment(loader=PackageLoader("helix_agents.cli._serve", "templates"), autoescape=True)
    env.filters.update(pretty=_pretty, compact=_compact, when=when, clip=_clip, visible=_visible)
    return Jinja2Templates(env=env)


@dataclass
class Inspector:
    """What every request of one server process shares: the open store, how its URL is
    shown, whether writes are on, and the CSRF token of the process (INS-10)."""

    store: SessionStateStore
    shown_url: str
    write: bool
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    templates: Jinja2Templates = field(default_factory=_templates)


def inspector_of(request: Request) -> Inspector:
    """The inspector serving ``request``."""
    inspector: Inspector = request.app.state.inspector
    return inspector


def render(request: Request, name: str, status: int = 200, **context: Any) -> Response:
    """The template ``name`` with the page's common values (store, write mode, token)."""
    inspector = inspector_of(request)
    return inspector.templates.TemplateResponse(
        request,
        name,
        {
            "store_url": inspector.shown_url,
            "write": inspector.write,
            "csrf": inspector.token if inspector.write else "",
            **context,
        },
        status_code=status,
    )
