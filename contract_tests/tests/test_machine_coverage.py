"""The state machine counts its steps, fails a run whose steps do not land, and reports."""

from __future__ import annotations

import pytest

from helix_agents.contract._coverage import MIN_TRIES, STEP_KINDS, StepCounts


def _counts(landed_share: float) -> StepCounts:
    counts = StepCounts()
    for kind in STEP_KINDS:
        for n in range(MIN_TRIES):
            counts.count(kind, n < landed_share * MIN_TRIES)
    return counts


def test_most_steps_landing_is_enough() -> None:
    assert _counts(0.8).shortfalls(0.6) == []


def test_a_kind_that_rarely_lands_is_a_shortfall() -> None:
    counts = _counts(0.8)
    for _ in range(MIN_TRIES * 3):
        counts.count("truncate", False)
    assert counts.shortfalls(0.6) == ["truncate"]


def test_a_kind_tried_a_few_times_is_not_judged() -> None:
    counts = StepCounts()
    for _ in range(MIN_TRIES - 1):
        counts.count("append", False)
    assert counts.shortfalls(0.6) == []


def test_faults_stay_a_minority_of_each_kind() -> None:
    counts = StepCounts()
    refused = 0
    for _ in range(100):
        fault = counts.allows_fault("pop")
        refused += fault
        counts.count("pop", not fault)
    assert 30 <= refused <= 34
    assert not counts.allows_fault("append")  # a kind starts with valid steps


def test_the_run_ends_with_the_step_counts(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_machine="""
        from typing import Any
        import pytest
        from helix_agents.contract import SessionStoreContract
        from helix_agents.store_memory import MemoryData, MemoryStateStore


        class TestCounted(SessionStoreContract):
            @pytest.fixture
            def store_factory(self) -> Any:
                data = MemoryData()
                return lambda **options: MemoryStateStore(data, **options)
    """
    )
    result = pytester.runpytest_subprocess(
        "-p", "helix_agents.contract.plugin", "-q", "-k", "state_machine"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*helix-agents state machine: steps landed/tried*",
            "TestCounted: create */*, *resolve */*",
        ]
    )
