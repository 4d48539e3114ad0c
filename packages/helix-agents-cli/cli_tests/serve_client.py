"""The inspector's app over a store, reached through httpx's ASGI transport (no socket)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from helix_agents.cli._demo import write_demo
from helix_agents.cli._open import open_reading
from helix_agents.cli._serve import inspector_app
from helix_agents.core import open_store

from .conftest import with_option

BASE = "http://127.0.0.1"


@asynccontextmanager
async def inspect(url: str, *, write: bool = False) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the inspector over the store at ``url``, opened as ``serve`` opens it."""
    async with open_store(url) if write else open_reading(url) as store:
        app = inspector_app(store, url=url, write=write)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
            yield client


def token_of(page: str) -> str:
    """The CSRF token a page's forms carry."""
    marker = 'name="csrf" value="'
    start = page.index(marker) + len(marker)
    return page[start : page.index('"', start)]


async def make_demo(url: str) -> str:
    """The session ``helix-store demo`` writes; its offloaded output's id."""
    seeding = with_option(url, "auto_migrate", "true") if url.startswith("postgres") else url
    return await write_demo(seeding)
