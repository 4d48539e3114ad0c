"""The refusal table: a server's refusal is re-raised as core's error, or reported as drift."""

from __future__ import annotations

import pytest

from helix_agents.core import (
    MessageCountConflictError,
    RunSupersededError,
    SessionNotFoundError,
    StateStoreError,
)
from helix_agents.core.refusals import REFUSALS, raise_refusal


def _raises(err: StateStoreError) -> None:
    raise err


def test_the_replayed_error_of_the_codes_class_is_raised() -> None:
    """A replay raising the class the code stands for raises exactly that error."""
    err = MessageCountConflictError("expected 1", session_id="s")
    with pytest.raises(MessageCountConflictError) as caught:
        raise_refusal("s", "count_conflict", [lambda: None, lambda: _raises(err)], server="x")
    assert caught.value is err


@pytest.mark.parametrize("replay", ["accepts", "other class"])
def test_a_replay_that_disagrees_is_reported_as_drift(replay: str) -> None:
    """A replay that accepts, or raises another class than the code's, is plain drift."""
    checks = [] if replay == "accepts" else [lambda: _raises(RunSupersededError("r"))]
    with pytest.raises(StateStoreError) as caught:
        raise_refusal("s", "count_conflict", checks, server="the test server")
    assert type(caught.value) is StateStoreError
    assert caught.value.session_id == "s"
    assert "the test server refused the write as 'count_conflict'" in str(caught.value)


def test_an_unknown_code_is_drift_whatever_the_replay_raises() -> None:
    """A code outside the table never passes an error through."""
    with pytest.raises(StateStoreError) as caught:
        raise_refusal("s", "nf", [lambda: _raises(RunSupersededError("r"))], server="x")
    assert type(caught.value) is StateStoreError


def test_a_missing_session_needs_no_replay() -> None:
    """session_not_found raises core's error at once, without running the checks."""
    with pytest.raises(SessionNotFoundError) as caught:
        raise_refusal(
            "s", "session_not_found", [lambda: _raises(RunSupersededError("r"))], server="x"
        )
    assert caught.value.code == "state_session_not_found"
    assert REFUSALS["session_not_found"] == (SessionNotFoundError,)
