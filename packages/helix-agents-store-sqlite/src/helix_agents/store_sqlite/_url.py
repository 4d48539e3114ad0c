"""The ``sqlite://`` entry point of ``helix_agents.core.open_store``."""

from __future__ import annotations

from typing import Any

from ._config import check_options, namespaced_path, options_from_query, parse_url
from .store import SQLiteStateStore

__all__ = ["open_url"]


def open_url(url: str, *, namespace: str | None = None, **options: Any) -> SQLiteStateStore:
    """The store for ``sqlite:///relative.db`` or ``sqlite:////absolute.db`` (not yet opened).

    ``?busy_timeout=<seconds>&synchronous=<NORMAL|FULL>`` set those options, and
    ``?mode=ro`` the ``read_only`` one, ``?idle_ttl=<seconds>``,
    ``sweep_interval=<seconds|off>``, ``keep_checkpoints=<n>`` and
    ``checkpoint_ttl=<seconds>`` the expiry options (docs/lifecycle.md); keyword
    ``options`` win over the URL's.
    ``namespace`` keeps the data in a sibling file: ``agent.db`` becomes
    ``agent.<namespace>.db``.
    """
    path, query = parse_url(url)
    check_options(options)
    merged = {**options_from_query(query), **options}
    return SQLiteStateStore(namespaced_path(path, namespace), **merged)
