"""PAI-8: a save records the usage of its model responses with its rows, on four backends."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RequestUsage

from helix_agents.core import MessageCountConflictError, SessionStateStore
from helix_agents.core.models import Usage, UsageTotals
from helix_agents.pydantic_ai import HelixHistory

pytestmark = pytest.mark.anyio


def _answer(text: str, usage: RequestUsage, model: str | None) -> ModelResponse:
    return ModelResponse(parts=[TextPart(text)], usage=usage, model_name=model)


async def test_PAI_8_a_runs_usage_is_saved_with_its_messages(store: SessionStateStore) -> None:
    agent = Agent(TestModel(custom_output_text="noted"))
    history = HelixHistory(store, "chat", user_id="ada")
    await history.load()
    result = await agent.run("remember: blue", message_history=history.messages)
    await history.save(result.new_messages())
    responses = [m for m in result.new_messages() if isinstance(m, ModelResponse)]
    totals = await store.get_usage("chat")
    assert [u.model for u in totals.models] == ["test"]
    assert (totals.requests, totals.input_tokens, totals.output_tokens) == (
        len(responses),
        sum(r.usage.input_tokens for r in responses),
        sum(r.usage.output_tokens for r in responses),
    )
    assert totals.input_tokens > 0 and totals.cost is None
    assert (await store.get_user_usage("ada")).usage == totals


async def test_PAI_8_costs_cache_reads_and_a_refused_save(store: SessionStateStore) -> None:
    history = HelixHistory(store, "chat")
    await history.load()
    late = HelixHistory(store, "chat")
    await late.load()
    ask = ModelRequest(parts=[UserPromptPart("hi")])
    priced = RequestUsage(input_tokens=50, output_tokens=5, cache_read_tokens=80)
    priced.cost = Decimal("0.00012345678901234")  # a provider's reported cost: 12 places kept
    await history.save(
        [ask, _answer("a", priced, "gpt-4o"), _answer("b", RequestUsage(input_tokens=7), None)]
    )
    gpt = Usage(
        model="gpt-4o",
        input_tokens=50,
        output_tokens=5,
        cached_tokens=50,
        cost=Decimal("0.000123456789"),
    )
    unknown = Usage(model="unknown", input_tokens=7)
    assert await store.get_usage("chat") == UsageTotals.of([gpt, unknown])
    # A save refused by its expected count records no usage either.
    with pytest.raises(MessageCountConflictError):
        await late.save([ask, _answer("c", RequestUsage(input_tokens=1000), "gpt-4o")])
    assert await store.get_usage("chat") == UsageTotals.of([gpt, unknown])
