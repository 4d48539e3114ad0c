"""Errors of the Postgres store, and the wrapping of driver errors into core's.

::

    StateStoreError (core)
     ├── ValidationError (core)          a value PostgreSQL cannot store (NUL in text)
     ├── StoreMisconfiguredError (core)  a connection refused for a reason retrying cannot fix
     ├── StoreUnavailableError (core)    every other driver error or timeout, say whether it
     │                                   may have landed
     └── MigrationError (core)           state_migration: the schema does not match the migrations
"""

from __future__ import annotations

import logging

import psycopg
from psycopg import errors as pg_errors

from helix_agents.core import StateStoreError, StoreUnavailableError, ValidationError
from helix_agents.core.errors import MigrationError, StoreMisconfiguredError

__all__ = ["MigrationError", "connect_error", "timeout_error", "wrap_driver_error"]

logger = logging.getLogger("helix_agents.store_postgres")

# A statement the server refused (and rolled back) surely did not land; these did not either.
_NOT_LANDED = (
    pg_errors.SerializationFailure,
    pg_errors.DeadlockDetected,
    pg_errors.QueryCanceled,
    pg_errors.LockNotAvailable,
)
_UNSTORABLE = (pg_errors.CharacterNotInRepertoire, pg_errors.UntranslatableCharacter)


def wrap_driver_error(
    exc: psycopg.Error, *, what: str, session_id: str | None, sent_write: bool, broken: bool
) -> StateStoreError:
    """The store error for a driver error raised while doing ``what``.

    ``sent_write`` says a write was handed to a connection; ``broken`` that the
    connection was then lost, so the write may have landed.
    """
    client_side = isinstance(exc, psycopg.DataError) and exc.sqlstate is None
    if isinstance(exc, _UNSTORABLE) or client_side:
        return ValidationError(
            f"{_where(session_id)}{what}: a value cannot be stored in PostgreSQL "
            f"(text cannot contain NUL characters): {exc}",
            session_id=session_id,
        )
    may_have_landed = (
        sent_write and (broken or exc.sqlstate is None) and not isinstance(exc, _NOT_LANDED)
    )
    logger.warning(
        "%s%s failed (may have landed: %s): %s", _where(session_id), what, may_have_landed, exc
    )
    return StoreUnavailableError(
        f"{_where(session_id)}{what} failed, PostgreSQL unavailable ({type(exc).__name__}: {exc})",
        session_id=session_id,
        may_have_landed=may_have_landed,
    )


def _where(session_id: str | None) -> str:
    return "" if session_id is None else f"session {session_id!r}: "


def timeout_error(
    *, what: str, session_id: str | None, timeout: float, may_have_landed: bool
) -> StoreUnavailableError:
    """The error of an operation that had no answer within ``operation_timeout``."""
    landed = "; the write may have landed" if may_have_landed else ""
    return StoreUnavailableError(
        f"{_where(session_id)}{what}: no answer from PostgreSQL within "
        f"operation_timeout={timeout:g} s, connection dropped{landed}",
        session_id=session_id,
        may_have_landed=may_have_landed,
    )


def connect_error(
    *,
    shown: str,
    reason: str,
    refused: str | None,
    what: str | None = None,
    session_id: str | None = None,
) -> StateStoreError:
    """The error of a failed connect: misconfigured when retrying cannot help, else unavailable.

    ``shown`` is the redacted conninfo, ``reason`` the driver's message with
    every secret masked, and ``refused`` the kind of refusal retrying cannot
    fix (told by ``_startup.refusal``), or ``None``. The caller chains a copy of
    the driver's error that holds no connection object (psycopg keeps the
    password on it).
    """
    head = f"{_where(session_id)}{what}: " if what else _where(session_id)
    if refused is not None:
        return StoreMisconfiguredError(
            f"{head}cannot connect to PostgreSQL at {shown!r} ({refused}): {reason}",
            session_id=session_id,
        )
    logger.warning("%scannot connect to PostgreSQL at %r: %s", head, shown, reason)
    return StoreUnavailableError(
        f"{head}cannot connect to PostgreSQL at {shown!r}: {reason}", session_id=session_id
    )
