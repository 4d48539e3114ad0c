"""Strategy resolution and what each strategy turns on."""

from __future__ import annotations

import logging

import pytest

from helix_agents.core.context import features, resolve_strategy


def test_CS_13_agent_then_model_then_hybrid() -> None:
    assert resolve_strategy("static", "dynamic") == "static"
    assert resolve_strategy(None, "dynamic") == "dynamic"
    assert resolve_strategy(None, None) == "hybrid"
    # Nothing is inferred (from a model name or otherwise): the last level is the caller's.
    assert resolve_strategy(None, None, default="static") == "static"


def test_CS_13_case_insensitive() -> None:
    assert resolve_strategy("STATIC", None) == "static"
    assert resolve_strategy(" Dynamic ", None) == "dynamic"


def test_CS_13_unknown_value_warns_and_falls_to_the_next_level(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="helix_agents.core.context"):
        assert resolve_strategy("turbo", "static") == "static"
    assert "'turbo'" in caplog.text and "agent" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="helix_agents.core.context"):
        assert resolve_strategy("turbo", "eager") == "hybrid"
    assert "'turbo'" in caplog.text and "'eager'" in caplog.text


def test_CS_13_each_strategy_is_a_superset_of_the_last() -> None:
    static, hybrid, dynamic = (features(s) for s in ("static", "hybrid", "dynamic"))
    assert (static.offload_outputs, static.preserve_history, static.lazy_tools) == (
        False,
        False,
        False,
    )
    assert (hybrid.offload_outputs, hybrid.preserve_history, hybrid.lazy_tools) == (
        True,
        True,
        False,
    )
    assert dynamic.offload_outputs and dynamic.preserve_history and dynamic.lazy_tools
