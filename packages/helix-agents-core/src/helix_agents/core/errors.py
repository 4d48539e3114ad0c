"""Errors raised by every session store.

Every error a store raises is a :class:`StateStoreError`; driver exceptions
are wrapped, never leaked. Each concrete class carries a stable ``code`` and a
``retryable`` flag::

    StateStoreError
     ├── SessionNotFoundError            state_session_not_found
     ├── SessionExistsError              state_session_exists
     ├── ValidationError                 validation_error
     ├── RunSupersededError              state_run_superseded
     ├── ConcurrencyConflictError        state_concurrency_conflict (retryable)
     │    ├── MessageCountConflictError
     │    ├── ContextItemDeliveryConflictError
     │    ├── LateAnswerDeliveryConflictError
     │    └── StaleCheckpointError
     ├── ApprovalNotFoundError           state_approval_not_found
     ├── ForeignSessionError             state_foreign_session
     ├── MigrationError                  state_migration
     ├── StoreMisconfiguredError         state_misconfigured
     ├── EncryptionKeyError              state_encryption_key
     └── StoreUnavailableError           state_unavailable (retryable)
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "ApprovalNotFoundError",
    "ConcurrencyConflictError",
    "ContextItemDeliveryConflictError",
    "EncryptionKeyError",
    "ForeignSessionError",
    "LateAnswerDeliveryConflictError",
    "MessageCountConflictError",
    "MetadataVersionConflictError",
    "MigrationError",
    "RunSupersededError",
    "SessionExistsError",
    "SessionNotFoundError",
    "StaleCheckpointError",
    "StateStoreError",
    "StoreMisconfiguredError",
    "StoreUnavailableError",
    "ValidationError",
    "approval_not_found",
    "is_message_count_conflict",
    "is_retryable",
    "lookup",
    "session_not_found",
]

_by_code: dict[str, type[StateStoreError]] = {}


class StateStoreError(Exception):
    """Root of every error a session store raises."""

    code: ClassVar[str] = "state_error"
    retryable: ClassVar[bool] = False

    def __init__(self, message: str, *, session_id: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.session_id = session_id

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # The first class to declare a code owns it; subclasses refine it.
        if "code" in cls.__dict__:
            _by_code.setdefault(cls.code, cls)

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only fields are not in ``args``, so Exception's own reduce loses them.
        return (_rebuild, (type(self), self.message, self.__dict__.copy()))

    def __str__(self) -> str:
        return self.message


def _rebuild(cls: type[StateStoreError], message: str, state: dict[str, Any]) -> StateStoreError:
    err = cls.__new__(cls)
    Exception.__init__(err, message)
    err.__dict__.update(state)
    return err


class SessionNotFoundError(StateStoreError):
    """The session does not exist (or was deleted)."""

    code = "state_session_not_found"


class SessionExistsError(StateStoreError):
    """A session with this id already exists."""

    code = "state_session_exists"


class ValidationError(StateStoreError, ValueError):
    """The input is malformed; retrying the same input cannot succeed."""

    code = "validation_error"


class RunSupersededError(StateStoreError):
    """The fenced run is not the session's current, live run."""

    code = "state_run_superseded"


class ConcurrencyConflictError(StateStoreError):
    """Another writer changed the session first; re-read and retry."""

    code = "state_concurrency_conflict"
    retryable = True


class _ExpectedValueConflictError(ConcurrencyConflictError):
    """A conflict between the value a write expected and the one it found."""

    def __init__(
        self,
        message: str,
        *,
        session_id: str | None = None,
        expected: int | None = None,
        actual: int | None = None,
    ) -> None:
        super().__init__(message, session_id=session_id)
        self.expected = expected
        self.actual = actual


class MessageCountConflictError(_ExpectedValueConflictError):
    """The session's row count differs from the commit's expected count."""


class ContextItemDeliveryConflictError(ConcurrencyConflictError):
    """A context item is missing, already delivered, or named twice."""


class LateAnswerDeliveryConflictError(ConcurrencyConflictError):
    """A late answer is missing, already delivered, or named twice."""


class StaleCheckpointError(ConcurrencyConflictError):
    """A checkpoint extends a parent that another writer already extended; reload and retry."""

    def __init__(
        self,
        message: str,
        *,
        session_id: str | None = None,
        parent_id: str | None = None,
        child_id: str | None = None,
    ) -> None:
        super().__init__(message, session_id=session_id)
        self.parent_id = parent_id
        self.child_id = child_id


class MetadataVersionConflictError(_ExpectedValueConflictError):
    """The session's metadata version differs from the update's expected version."""


class ApprovalNotFoundError(StateStoreError):
    """No pending or resolved approval has this id."""

    code = "state_approval_not_found"


class ForeignSessionError(StateStoreError):
    """The session belongs to another adapter (docs/integrations/sharing.md, ADP-2).

    ``owner`` is the adapter that created it, ``adapter`` the one refused.
    """

    code = "state_foreign_session"

    def __init__(
        self, message: str, *, session_id: str | None = None, owner: str = "", adapter: str = ""
    ) -> None:
        super().__init__(message, session_id=session_id)
        self.owner = owner
        self.adapter = adapter


class MigrationError(StateStoreError):
    """The backend's schema cannot be used: a changed, unknown or newer migration."""

    code = "state_migration"


class StoreMisconfiguredError(StateStoreError):
    """The server refused the connection for a reason retrying cannot fix.

    A wrong password, an unknown database or role, a server that is not the
    backend's kind, a TLS setting the server cannot meet. The server's own
    reason is in the message and in ``__cause__``; no secret from the URL is.
    """

    code = "state_misconfigured"


class EncryptionKeyError(StateStoreError):
    """An encrypted session's key cannot be opened (docs/encryption.md, ENC-4).

    The key provider lacks its key-encryption key (``key_id``), the key does not
    open the session's data key or a record, or a store without encryption met a
    session stored encrypted. Nothing of the session is returned.
    """

    code = "state_encryption_key"

    def __init__(
        self, message: str, *, session_id: str | None = None, key_id: str | None = None
    ) -> None:
        super().__init__(message, session_id=session_id)
        self.key_id = key_id


class StoreUnavailableError(StateStoreError):
    """The backend could not be reached or failed mid-operation.

    ``may_have_landed`` is true when a write was sent but its outcome is
    unknown; retrying a commit with the same ``commit_id`` is then safe.
    """

    code = "state_unavailable"
    retryable = True

    def __init__(
        self, message: str, *, session_id: str | None = None, may_have_landed: bool = False
    ) -> None:
        super().__init__(message, session_id=session_id)
        self.may_have_landed = may_have_landed


def lookup(code: str) -> type[StateStoreError]:
    """Return the error class registered for ``code``; ``KeyError`` if none."""
    return _by_code[code]


def is_message_count_conflict(err: BaseException) -> bool:
    """Whether ``err`` is an expected-count conflict (EMC-1)."""
    return isinstance(err, MessageCountConflictError)


def is_retryable(err: BaseException) -> bool:
    """Whether retrying the operation that raised ``err`` may succeed."""
    return isinstance(err, StateStoreError) and err.retryable


_by_code.setdefault(StateStoreError.code, StateStoreError)


def session_not_found(session_id: str) -> SessionNotFoundError:
    """The error of every method on a missing session."""
    return SessionNotFoundError(f"session {session_id!r} not found", session_id=session_id)


def approval_not_found(session_id: str, approval_id: str) -> ApprovalNotFoundError:
    """The error of resolving an approval the session does not have pending."""
    return ApprovalNotFoundError(
        f"session {session_id!r}: no approval {approval_id!r}", session_id=session_id
    )
