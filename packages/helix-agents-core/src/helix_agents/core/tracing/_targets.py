"""What a span says about where the store lives: ``db.system.name`` and ``db.namespace``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = ["system_of", "url_target"]

# The store packages of the family and the semconv system each one talks to; a store
# kept in process memory has no well-known name, so it gets a namespaced custom one.
_SYSTEMS = {
    "helix_agents.store_memory": "helix.memory",
    "helix_agents.store_sqlite": "sqlite",
    "helix_agents.store_postgres": "postgresql",
    "helix_agents.store_redis": "redis",
}
_SCHEMES = {
    "memory": "helix.memory",
    "sqlite": "sqlite",
    "postgresql": "postgresql",
    "postgres": "postgresql",
    "redis": "redis",
    "rediss": "redis",
    "redis+cluster": "redis",
}


def system_of(store: object) -> str | None:
    """The ``db.system.name`` of a store of the family, ``None`` for any other store."""
    package = ".".join(type(store).__module__.split(".")[:2])
    return _SYSTEMS.get(package)


def url_target(
    url: str, options: Mapping[str, Any], store: object
) -> tuple[str | None, str | None]:
    """``(db.system.name, db.namespace)`` of ``store``, opened from ``url`` with ``options``.

    The namespace is what semconv names for each system: the file of SQLite (its
    ``path``, which a ``namespace`` option changes), the
    database and schema of PostgreSQL (``db.schema``), the database index of Redis,
    the name of a named memory store. Never the user, host or password.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    system = _SCHEMES.get(scheme)
    path = unquote(parts.path)
    if system == "sqlite":
        file = getattr(store, "path", None)
        return system, file if isinstance(file, str) else None
    if system == "postgresql":
        query = dict(parse_qsl(parts.query))
        schema = options.get("namespace") or options.get("schema") or query.get("schema")
        database = path.lstrip("/") or query.get("dbname")
        return system, None if not database else f"{database}.{schema or 'public'}"
    if system == "redis":
        index = path.strip("/") if scheme != "redis+cluster" else ""
        return system, index or "0"
    if system == "helix.memory":
        return system, unquote(parts.netloc) or None
    return system, None
