"""Errors carry codes and retryable flags, are found by code, and pickle."""

from __future__ import annotations

import pickle

import pytest

import helix_agents.core.errors as errors
from helix_agents.core import (
    ConcurrencyConflictError,
    MessageCountConflictError,
    StateStoreError,
    StoreUnavailableError,
    is_retryable,
)
from helix_agents.core.errors import (
    ContextItemDeliveryConflictError,
    is_message_count_conflict,
    lookup,
)

TABLE = [
    ("SessionNotFoundError", "state_session_not_found", False),
    ("SessionExistsError", "state_session_exists", False),
    ("ValidationError", "validation_error", False),
    ("RunSupersededError", "state_run_superseded", False),
    ("MessageCountConflictError", "state_concurrency_conflict", True),
    ("ContextItemDeliveryConflictError", "state_concurrency_conflict", True),
    ("LateAnswerDeliveryConflictError", "state_concurrency_conflict", True),
    ("StaleCheckpointError", "state_concurrency_conflict", True),
    ("ApprovalNotFoundError", "state_approval_not_found", False),
    ("MigrationError", "state_migration", False),
    ("StoreUnavailableError", "state_unavailable", True),
]


@pytest.mark.parametrize(("name", "code", "retryable"), TABLE)
def test_codes_and_retryable(name: str, code: str, retryable: bool) -> None:
    cls = getattr(errors, name)
    err = cls(f"session 's1': {name}", session_id="s1")
    assert isinstance(err, StateStoreError)
    assert (err.code, err.retryable, is_retryable(err)) == (code, retryable, retryable)
    assert isinstance(err, lookup(code))
    assert cls.__module__ == "helix_agents.core.errors"
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is cls
    assert (str(copy), copy.session_id) == (str(err), "s1")


def test_shared_code_looks_up_the_common_parent() -> None:
    assert lookup("state_concurrency_conflict") is ConcurrencyConflictError
    with pytest.raises(KeyError):
        lookup("no_such_code")


def test_extra_fields_survive_pickling() -> None:
    err = pickle.loads(
        pickle.dumps(MessageCountConflictError("stale", session_id="s", expected=1, actual=2))
    )
    assert (err.expected, err.actual) == (1, 2)
    stale = pickle.loads(
        pickle.dumps(errors.StaleCheckpointError("x", session_id="s", parent_id="p", child_id="c"))
    )
    assert (stale.parent_id, stale.child_id) == ("p", "c")
    unavailable = pickle.loads(pickle.dumps(StoreUnavailableError("x", may_have_landed=True)))
    assert unavailable.may_have_landed is True


def test_count_conflict_predicate() -> None:
    assert is_message_count_conflict(MessageCountConflictError("x"))
    assert not is_message_count_conflict(ContextItemDeliveryConflictError("x"))
    assert not is_retryable(ValueError("driver error"))
