"""Where a store's database lives and how it is opened: URLs, namespaces, options."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from helix_agents.core import ValidationError
from helix_agents.core.backend import OPTION_NAMES, check_text, expiry_options, redact_url

__all__ = [
    "OPTIONS",
    "SQLiteConfig",
    "Synchronous",
    "namespaced_path",
    "options_from_query",
    "parse_url",
]

Synchronous = Literal["OFF", "NORMAL", "FULL", "EXTRA"]
_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")
_NAMESPACE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_MEMORY = (":memory:", "")
_MODES = {"ro": True, "rwc": False}  # SQLite's URI modes a store can use
OPTIONS = frozenset(
    {"busy_timeout", "clock", "max_messages", "read_only", "synchronous", *OPTION_NAMES}
)
_QUERY = frozenset({"busy_timeout", "mode", "synchronous", *OPTION_NAMES})
"""The keyword options of :class:`~helix_agents.store_sqlite.SQLiteStateStore`."""


@dataclass(frozen=True, slots=True)
class SQLiteConfig:
    """How the store opens its database file.

    ``busy_timeout`` is how long (seconds) a writer waits for another
    connection's write lock; ``synchronous`` is SQLite's ``PRAGMA synchronous``
    (``NORMAL``: a commit survives a crash of the process, ``FULL``: also a
    power loss, at the cost of one fsync per commit). ``read_only`` opens an
    existing file with SQLite's ``mode=ro``: nothing is created or migrated,
    and every write is refused.
    """

    path: str
    busy_timeout: float = 5.0
    synchronous: Synchronous = "NORMAL"
    read_only: bool = False

    def __post_init__(self) -> None:
        check_text(self.path, "SQLite path")
        if "\x00" in self.path:
            raise ValidationError(f"SQLite path {self.path!r} holds NUL (U+0000)")
        if self.path in _MEMORY or self.path.startswith("file::memory:"):
            raise ValidationError(
                "an in-memory SQLite database cannot be shared by two connections or "
                "processes: use a file path (sqlite:///agent.db), or memory:// for an "
                "in-process store"
            )
        if (
            isinstance(self.busy_timeout, bool)
            or not isinstance(self.busy_timeout, int | float)
            or not 0 <= self.busy_timeout <= 86_400
        ):
            raise ValidationError(f"busy_timeout {self.busy_timeout!r} is outside 0..86400 seconds")
        if self.synchronous not in _SYNCHRONOUS:
            raise ValidationError(
                f"synchronous {self.synchronous!r} is not one of {', '.join(_SYNCHRONOUS)}"
            )
        if not isinstance(self.read_only, bool):
            raise ValidationError(f"read_only {self.read_only!r} is not a boolean")

    def database(self) -> tuple[str, bool]:
        """What ``sqlite3.connect`` opens, and whether it is a URI (``mode=ro`` when read-only)."""
        if not self.read_only:
            return self.path, False
        return f"file:{quote(self.path, safe='/')}?mode=ro", True


def parse_url(url: str) -> tuple[str, dict[str, str]]:
    """The file path and query options of ``sqlite:///relative.db`` or ``sqlite:////abs.db``."""
    shown = redact_url(url)
    check_text(url, "SQLite URL")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise ValidationError(f"not a sqlite:// URL: {shown!r}") from None
    if parts.scheme.lower() != "sqlite":
        raise ValidationError(f"not a sqlite:// URL: {shown!r}")
    if parts.netloc:
        raise ValidationError(
            f"SQLite URL {shown!r} names a host: write sqlite:///relative.db "
            f"or sqlite:////absolute/path.db"
        )
    path = unquote(parts.path)
    if not path.startswith("/") or path == "/":
        raise ValidationError(f"SQLite URL {shown!r} names no file (try sqlite:///agent.db)")
    path = path[1:]
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    unknown = set(query) - _QUERY
    if unknown:
        raise ValidationError(
            f"SQLite URL {shown!r}: unknown option(s) {', '.join(sorted(unknown))} "
            f"(known: {', '.join(sorted(_QUERY))})"
        )
    return path, query


def namespaced_path(path: str, namespace: str | None) -> str:
    """The sibling file that holds ``namespace``: ``agent.db`` -> ``agent.<namespace>.db``."""
    if namespace is None:
        return path
    if not isinstance(namespace, str) or not _NAMESPACE.match(namespace):
        raise ValidationError(
            f"SQLite namespace {namespace!r} must be 1..64 letters, digits, '_' or '-'"
        )
    file = Path(path)
    return os.fspath(file.with_name(f"{file.stem}.{namespace}{file.suffix}"))


def options_from_query(query: dict[str, str]) -> dict[str, object]:
    """Typed store options from a URL's query string (the expiry options: docs/lifecycle.md)."""
    options: dict[str, object] = expiry_options(query)
    if "busy_timeout" in query:
        try:
            options["busy_timeout"] = float(query["busy_timeout"])
        except ValueError:
            raise ValidationError(
                f"busy_timeout {query['busy_timeout']!r} is not a number of seconds"
            ) from None
    if "synchronous" in query:
        options["synchronous"] = query["synchronous"].upper()
    if "mode" in query:
        if query["mode"] not in _MODES:
            raise ValidationError(
                f"mode {query['mode']!r} is not ro (read-only) or rwc (read, write, create)"
            )
        options["read_only"] = _MODES[query["mode"]]
    return options


def check_options(options: dict[str, object]) -> None:
    """Every keyword is one of :data:`OPTIONS`."""
    unknown = set(options) - OPTIONS
    if unknown:
        raise ValidationError(
            f"unknown SQLite store option(s) {', '.join(sorted(map(repr, unknown)))} "
            f"(known: {', '.join(sorted(OPTIONS))})"
        )
