"""Core's rules of pop and replace, on their own (the contract runs them on every store)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from helix_agents.core import (
    ChatMessage,
    MessageCountConflictError,
    RunSupersededError,
    ValidationError,
)
from helix_agents.core.edits import (
    check_pop_count,
    check_replace,
    check_replace_state,
    check_rows,
    pop_keep,
)
from helix_agents.core.models import RunInfo

LIVE = RunInfo(run_id="r1", status="live", started_at=datetime(2026, 1, 1, tzinfo=UTC))


@pytest.mark.parametrize(
    ("count", "first", "total", "keep"),
    [(1, 0, 5, 4), (5, 0, 5, 0), (9, 0, 5, 0), (9, 3, 5, 3), (1, 5, 5, 5), (1, 0, 0, 0)],
)
def test_pop_keep_removes_only_retained_rows(count: int, first: int, total: int, keep: int) -> None:
    assert pop_keep(count, first, total) == keep


@pytest.mark.parametrize("count", [0, 501, -1, True, 1.0, "1"])
def test_pop_count_outside_1_to_500_is_refused(count: object) -> None:
    with pytest.raises(ValidationError) as caught:
        check_pop_count("s", count)  # type: ignore[arg-type]
    assert caught.value.session_id == "s"


def test_replace_judges_keep_by_the_expected_count() -> None:
    rows = check_replace("s", 2, [{"role": "user", "content": "x"}], 2)
    assert rows == [ChatMessage(role="user", content="x")]
    for keep, expect in ((3, 2), (-1, 2), (0, -1)):
        with pytest.raises(ValidationError):
            check_replace("s", keep, [], expect)
    with pytest.raises(ValidationError, match="row 1"):
        check_rows("s", [{"role": "user", "content": "x"}, {"role": "robot"}])
    with pytest.raises(ValidationError):
        check_rows("s", "not rows")


def test_replace_state_checks_fence_then_count_then_retention() -> None:
    def check(fence: str | None, count: int, first: int, keep: int = 2) -> None:
        check_replace_state(
            "s", keep, 4, fence, message_count=count, first_index=first, current_run=LIVE
        )

    with pytest.raises(RunSupersededError):
        check("r9", 5, 3)  # a stale count and retention too: the fence wins
    with pytest.raises(MessageCountConflictError) as caught:
        check("r1", 5, 3)
    assert (caught.value.expected, caught.value.actual) == (4, 5)
    with pytest.raises(ValidationError):
        check(None, 4, 3)
    check("r1", 4, 2)
