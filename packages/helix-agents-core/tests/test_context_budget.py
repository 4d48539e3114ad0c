"""The token budget: thresholds, schemas, the estimate, offloading in tokens."""

from __future__ import annotations

import json
import sys

import pytest

from helix_agents.core import ChatMessage, JsonObject
from helix_agents.core.context import Budget, EstimateCounter, default_counter


class Words:
    """One token per whitespace-separated word: makes thresholds easy to hit exactly."""

    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


def test_CS_14_thresholds_on_the_effective_limit() -> None:
    budget = Budget(context_window=1000, counter=Words())
    assert budget.limit == 850
    row = ChatMessage(role="user", content=" ".join(["w"] * 100))
    assert budget.measure([row] * 4).level == "ok"  # 416 tokens: < 510
    assert budget.measure([row] * 5).level == "warn"  # 520: >= 60 % of 850
    assert budget.measure([row] * 7).level == "compact"  # 728: >= 75 % (637.5)


def test_CS_14_tool_schemas_count() -> None:
    budget = Budget(context_window=1000, counter=EstimateCounter())
    rows = [ChatMessage(role="user", content="hello")]
    schema: JsonObject = {
        "name": "search",
        "parameters": {"type": "object", "properties": {"q": {}}},
    }
    assert budget.tokens(rows, [schema]) > budget.tokens(rows)


def test_CS_14_offload_threshold_is_in_tokens() -> None:
    budget = Budget(context_window=100_000, offload_tokens=2_000, counter=EstimateCounter())
    prose = "the quick brown fox jumps over the lazy dog " * 150  # ~6,600 chars
    dense = json.dumps([{"k": i, "v": [i, i]} for i in range(300)])  # ~5,500 chars
    cjk = "文字" * 1_500  # 3,000 chars
    assert not budget.should_offload(prose)
    assert budget.should_offload(dense)
    assert budget.should_offload(cjk)


def test_CS_14_estimate_without_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # as if not installed: import fails
    counter = default_counter()
    assert isinstance(counter, EstimateCounter) and counter.name == "estimate"
    assert counter.count("") == 0
    assert counter.count("abcd efgh") >= 2
    assert counter.count("{}") == 2


def test_CS_14_bad_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="warn_at"):
        Budget(context_window=10, warn_at=0.9, compact_at=0.5, counter=Words())
