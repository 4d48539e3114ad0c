"""``open_store(url)``: find the backend for a URL's scheme through entry points."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any
from urllib.parse import urlsplit

from .errors import ValidationError
from .protocol import SessionStateStore
from .urls import redact_url

__all__ = ["ENTRY_POINT_GROUP", "open_store"]

ENTRY_POINT_GROUP = "helix_agents.stores"
"""The entry-point group where a backend registers its URL schemes for ``open_store``."""

_DISTRIBUTIONS = {
    "memory": "helix-agents-store-memory",
    "sqlite": "helix-agents-store-sqlite",
    "postgresql": "helix-agents-store-postgres",
    "postgres": "helix-agents-store-postgres",
    "redis": "helix-agents-store-redis",
    "rediss": "helix-agents-store-redis",
    "redis+cluster": "helix-agents-store-redis",
}


def open_store(url: str, **options: Any) -> SessionStateStore:
    """The store for ``url``, not yet connected: use it as ``async with open_store(url)``.

    ``options`` go to the backend (``max_messages=…``, ``namespace=…``, …).
    An unknown scheme, or one whose backend is not installed, is a
    :class:`ValidationError` naming the distribution to install.
    """
    try:
        scheme = urlsplit(url).scheme.lower() if isinstance(url, str) else ""
    except ValueError as exc:
        raise ValidationError(f"store URL {redact_url(url)!r} is malformed: {exc}") from None
    if not scheme:
        raise ValidationError(
            f"store URL {redact_url(url)!r} has no scheme (try 'sqlite:///agent.db')"
        )
    found = entry_points(group=ENTRY_POINT_GROUP, name=scheme)
    if not found:
        dist = _DISTRIBUTIONS.get(scheme)
        if dist is None:
            known = ", ".join(f"{s}://" for s in _DISTRIBUTIONS)
            raise ValidationError(
                f"unknown store URL scheme {scheme!r} in {redact_url(url)!r}; known: {known}"
            )
        raise ValidationError(f"no store is installed for {scheme}:// URLs: pip install {dist}")
    factory: Callable[..., SessionStateStore] = next(iter(found)).load()
    return factory(url, **options)
