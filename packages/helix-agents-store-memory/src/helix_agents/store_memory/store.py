"""``MemoryStateStore``: the whole protocol in process, the reference for every backend."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Unpack

from helix_agents.core import ValidationError
from helix_agents.core.backend import OPTION_NAMES, ExpiryOptions, StoreBase, redact_url, utcnow

from ._engine import MemoryEngine
from ._state import MemoryData

__all__ = ["MemoryStateStore"]

_SHARED: dict[str, MemoryData] = {}


class MemoryStateStore(StoreBase):
    """Session state in this process; lost when it exits.

    Stores built on one :class:`MemoryData` share their sessions, like two
    connections to one database. The expiry options (``idle_ttl``,
    ``sweep_interval``, ``keep_checkpoints``, ``checkpoint_ttl``) are
    docs/lifecycle.md's. Each session has its own lock, held only
    for the instant of a read or write, so sessions never wait on each other.
    """

    def __init__(
        self,
        data: MemoryData | None = None,
        *,
        max_messages: int | None = None,
        clock: Callable[[], datetime] = utcnow,
        name: str | None = None,
        **expiry: Unpack[ExpiryOptions],
    ) -> None:
        if data is not None and not isinstance(data, MemoryData):
            raise ValidationError(f"data must be a MemoryData, not {type(data).__name__}")
        self.data = data if data is not None else MemoryData()
        engine = MemoryEngine(self.data, name)
        super().__init__(engine, max_messages=max_messages, clock=clock, **expiry)


_OPTIONS = frozenset({"clock", "max_messages", *OPTION_NAMES})


def open_url(url: str, *, namespace: str | None = None, **options: Any) -> MemoryStateStore:
    """The ``memory://`` entry point; stores opened on ``memory://name`` share their data.

    Options are keywords only: a query string or an unknown keyword is a
    :class:`ValidationError`, never silently part of the name or ignored.
    """
    unknown = set(options) - _OPTIONS
    if unknown:
        raise ValidationError(
            f"unknown memory store option(s) {', '.join(sorted(map(repr, unknown)))} "
            f"(known: {', '.join(sorted(_OPTIONS))})"
        )
    if namespace is not None and not isinstance(namespace, str):
        raise ValidationError(f"namespace must be a string, not {type(namespace).__name__}")
    name = url.removeprefix("memory://").strip("/")
    if "?" in name or "#" in name:
        raise ValidationError(
            f"memory URL {redact_url(url)!r} has a query or fragment: "
            "memory:// takes its options as keywords"
        )
    if namespace:
        name = f"{name}/{namespace}"
    data = _SHARED.setdefault(name, MemoryData()) if name else None
    return MemoryStateStore(data, name=name or None, **options)
