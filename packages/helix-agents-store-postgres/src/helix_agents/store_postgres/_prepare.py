"""Server-side prepared statements named by their text, through psycopg's prepare manager.

psycopg names a connection's prepared statements ``_pg3_0``, ``_pg3_1``, … in
the order it prepares them; behind a pooler that moves a client between server
connections (PgBouncer before 1.21 in transaction mode), the same name can then
stand for another statement on another server connection. The store's names
are told by the statement's text and parameter types instead (``helix_`` and a
BLAKE2b digest), so a name means one statement wherever it is found.

The manager is psycopg's private ``psycopg._preparing.PrepareManager``; its
shape is checked before use (:func:`unsupported`), and a store that cannot use
it prepares nothing (``prepare="auto"``) or refuses to open (``prepare="on"``).
"""

from __future__ import annotations

import hashlib
import importlib
from typing import Any

from helix_agents.core import ValidationError

__all__ = [
    "PREPARE_MODES",
    "REFUSED",
    "STALE_PLAN",
    "check_mode",
    "manager_class",
    "named",
    "statement_name",
    "unsupported",
]

PREPARE_MODES = ("auto", "on", "off")
# The server (or a pooler in front of it) refuses named statements: unknown name, name taken.
REFUSED = frozenset({"26000", "42P05"})
# "cached plan must not change result type": a prepared statement outlived a migration.
STALE_PLAN = "0A000"

_MANAGER_METHODS = ("get", "key", "maybe_add_to_cache", "validate", "clear", "maintain_gen")
_MANAGER_STATE = ("prepare_threshold", "prepared_max", "_names", "_counts")
_classes: dict[type[Any], type[Any]] = {}


def check_mode(prepare: object) -> str:
    """``prepare`` if it is one of :data:`PREPARE_MODES`, else :class:`ValidationError`."""
    if not isinstance(prepare, str) or prepare not in PREPARE_MODES:
        raise ValidationError(
            f"option prepare={prepare!r} must be one of {', '.join(PREPARE_MODES)}"
        )
    return prepare


def statement_name(query: bytes, types: tuple[int, ...]) -> bytes:
    """The name of the prepared statement of ``query`` with parameters of OIDs ``types``."""
    digest = hashlib.blake2b(query, digest_size=20)
    digest.update(b"\x00" + ",".join(map(str, types)).encode())
    return b"helix_" + digest.hexdigest().encode()


def _preparing() -> Any:
    try:
        return importlib.import_module("psycopg._preparing")
    except ImportError:
        return None


def unsupported() -> str | None:
    """Why this psycopg's prepare manager cannot be used, or ``None`` when it can."""
    module = _preparing()
    if module is None:
        return "psycopg has no module psycopg._preparing"
    base = getattr(module, "PrepareManager", None)
    marks = getattr(module, "Prepare", None)
    if not isinstance(base, type):
        return "psycopg._preparing has no class PrepareManager"
    if marks is None or not all(hasattr(marks, m) for m in ("NO", "YES", "SHOULD")):
        return "psycopg._preparing.Prepare lacks NO, YES or SHOULD"
    lacking = [m for m in _MANAGER_METHODS if not callable(getattr(base, m, None))]
    try:
        state = base()
    except Exception as exc:  # any failure means a shape this module does not know
        return f"psycopg._preparing.PrepareManager() failed: {exc!r}"
    lacking += [m for m in _MANAGER_STATE if not hasattr(state, m)]
    if not hasattr(state, "__dict__"):  # adopting an application's manager copies it
        lacking.append("__dict__")
    if lacking:
        return f"psycopg._preparing.PrepareManager lacks {', '.join(lacking)}"
    return None


def manager_class() -> type[Any]:
    """The prepare manager naming statements by their text (call :func:`unsupported` first).

    On a connection the store opened it prepares only the statements executed
    with ``prepare=True``; adopted onto an application's connection it keeps
    psycopg's own rule (``prepare_threshold``) for the application's statements.
    """
    module = _preparing()
    base: type[Any] = module.PrepareManager
    found = _classes.get(base)
    if found is not None:
        return found
    should, no = module.Prepare.SHOULD, module.Prepare.NO

    class NamedByText(base):  # type: ignore[misc]
        explicit_only = True

        def get(self, query: Any, prepare: bool | None = None) -> tuple[Any, bytes]:
            if prepare is not True and self.explicit_only:
                return no, b""
            prep, name = super().get(query, prepare)
            if prep is should:
                name = statement_name(query.query, query.types)
            return prep, name

    _classes[base] = NamedByText
    return NamedByText


def named(conn: Any) -> bool:
    """Whether ``conn`` can prepare the store's statements under their names; installs the
    manager on an application's connection first, keeping what it had prepared.

    A connection whose ``prepare_threshold`` is ``None`` prepares nothing.
    """
    cls = manager_class()
    current = conn._prepared
    if not isinstance(current, cls):
        adopted = object.__new__(cls)
        adopted.__dict__.update(current.__dict__)
        adopted.explicit_only = False
        conn._prepared = adopted
    return conn.prepare_threshold is not None
