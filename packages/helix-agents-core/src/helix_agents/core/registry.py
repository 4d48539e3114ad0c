"""``open_store(url)``: find the backend for a URL's scheme through entry points."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .errors import ValidationError
from .protocol import SessionStateStore
from .urls import check_userinfo, redact_url

if TYPE_CHECKING:
    from .encryption import KeyProvider

__all__ = ["ENTRY_POINT_GROUP", "open_store"]

ENTRY_POINT_GROUP = "helix_agents.stores"
"""The entry-point group where a backend registers its URL schemes for ``open_store``."""

# Only for the message when no backend answers: what to install for a first-party
# scheme. Any backend, first-party or not, registers itself with an entry point in
# ENTRY_POINT_GROUP and needs no line here (docs/backends/writing.md).
_INSTALL_HINTS = {
    "memory": "helix-agents-store-memory",
    "sqlite": "helix-agents-store-sqlite",
    "postgresql": "helix-agents-store-postgres",
    "postgres": "helix-agents-store-postgres",
    "redis": "helix-agents-store-redis",
    "rediss": "helix-agents-store-redis",
    "redis+cluster": "helix-agents-store-redis",
    "redis+sentinel": "helix-agents-store-redis",
}


def open_store(
    url: str, *, tracing: bool = False, encryption: KeyProvider | None = None, **options: Any
) -> SessionStateStore:
    """The store for ``url``, not yet connected: use it as ``async with open_store(url)``.

    ``options`` go to the backend (``max_messages=…``, ``namespace=…``, …).
    An unknown scheme, or one whose backend is not installed, is a
    :class:`ValidationError` naming the distribution to install. ``tracing=True``
    wraps the store in :func:`helix_agents.core.tracing.traced` (the ``otel``
    extra), its ``db.system.name`` and ``db.namespace`` taken from the URL.
    ``encryption=`` a :class:`~helix_agents.core.encryption.KeyProvider` encrypts what
    the store writes (docs/encryption.md; the ``encryption`` extra).
    """
    try:
        scheme = urlsplit(url).scheme.lower() if isinstance(url, str) else ""
    except ValueError as exc:
        raise ValidationError(f"store URL {redact_url(url)!r} is malformed: {exc}") from None
    if not scheme:
        raise ValidationError(
            f"store URL {redact_url(url)!r} has no scheme (try 'sqlite:///agent.db')"
        )
    check_userinfo(url)
    found = entry_points(group=ENTRY_POINT_GROUP, name=scheme)
    if not found:
        dist = _INSTALL_HINTS.get(scheme)
        if dist is None:
            installed = sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})
            known = ", ".join(f"{s}://" for s in installed) or "none installed"
            raise ValidationError(
                f"unknown store URL scheme {scheme!r} in {redact_url(url)!r}; known: {known}"
            )
        raise ValidationError(f"no store is installed for {scheme}:// URLs: pip install {dist}")
    factory: Callable[..., SessionStateStore] = next(iter(found)).load()
    store = factory(url, **options)
    if encryption is not None:
        from .encryption import encrypt

        store = encrypt(store, encryption)
    return _traced(store) if tracing else store


def _traced(store: SessionStateStore) -> SessionStateStore:
    # Imported here: without tracing=True, opening a store never imports OpenTelemetry.
    try:
        from .tracing import traced
    except ImportError:
        raise ValidationError(
            "open_store(..., tracing=True) needs OpenTelemetry: "
            "pip install 'helix-agents-core[otel]'"
        ) from None
    return traced(store)
