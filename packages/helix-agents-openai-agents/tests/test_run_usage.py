"""OAI-11: the token usage of a run's model calls, from the SDK's own ``Usage`` objects."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, Runner
from agents.models import get_default_model
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from agents.usage import Usage as SdkUsage
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails
from run_helpers import approval_agent

from helix_agents.core import SessionStateStore
from helix_agents.core.models import Usage
from helix_agents.openai_agents import HelixRun
from helix_agents.openai_agents._usage import model_name

pytestmark = pytest.mark.anyio

SID = "chat"


def used(input_tokens: int, output_tokens: int, cached: int = 0) -> SdkUsage:
    """The SDK's usage of one model call."""
    return SdkUsage(
        requests=1,
        input_tokens=input_tokens,
        input_tokens_details=InputTokensDetails(cached_tokens=cached, cache_write_tokens=0),
        output_tokens=output_tokens,
        output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
        total_tokens=input_tokens + output_tokens,
    )


def scripted(name: str, *steps: ModelStep) -> ScriptedModel:
    """The SDK's scripted model, named as its OpenAI models are (their ``model``)."""
    model = ScriptedModel(list(steps))
    model.model = name  # type: ignore[attr-defined]
    return model


def say(text: str, usage: SdkUsage) -> ModelStep:
    return ModelStep(output=[assistant_message(text)], usage=usage)


async def test_OAI_11_a_runs_usage_is_recorded_per_model_once(store: SessionStateStore) -> None:
    billing = Agent(name="Billing", model=scripted("gpt-4o", say("refunded", used(900, 30, 800))))
    triage = Agent(
        name="Triage",
        model=scripted(
            "gpt-4o-mini",
            ModelStep(
                output=[function_call("transfer_to_billing", {}, call_id="h1")], usage=used(100, 5)
            ),
        ),
        handoffs=[billing],
    )
    async with HelixRun(store, SID, user_id="u") as run:
        result = await Runner.run(triage, "refund", session=run.session, run_config=run.run_config)
        recorded = await run.record_usage(result)
        assert await run.record_usage(result) == ()  # nothing new: nothing written
    mini = Usage(model="gpt-4o-mini", input_tokens=100, output_tokens=5)
    big = Usage(model="gpt-4o", input_tokens=900, output_tokens=30, cached_tokens=800)
    assert recorded == (mini, big)
    totals = await store.get_usage(SID)
    assert totals.models == (big, mini)
    sdk = result.context_wrapper.usage  # the SDK's own total of the run
    assert (totals.requests, totals.input_tokens, totals.output_tokens) == (
        sdk.requests,
        sdk.input_tokens,
        sdk.output_tokens,
    )
    assert totals.cached_tokens == sdk.input_tokens_details.cached_tokens
    assert (await store.get_user_usage("u")).usage == totals


async def test_OAI_11_a_resumed_run_records_only_its_own_calls(
    store: SessionStateStore,
) -> None:
    agent, model = approval_agent(
        ModelStep(
            output=[function_call("delete_file", {"path": "/x"}, call_id="c1")], usage=used(50, 4)
        )
    )
    model.model = "gpt-4o"  # type: ignore[attr-defined]
    async with HelixRun(store, SID, user_id="u") as run:
        result = await Runner.run(agent, "clean", session=run.session, run_config=run.run_config)
        await run.record_usage(result)
        [approval] = await run.pause(result)
    await store.resolve_approval(SID, approval.approval_id)
    again, model = approval_agent(say("done", used(70, 6, 20)))
    model.model = "gpt-4o"  # type: ignore[attr-defined]
    async with HelixRun(store, SID, resume=True) as run:
        state = await run.resume_state(again)
        result = await Runner.run(again, state, session=run.session, run_config=run.run_config)
        assert len(result.raw_responses) == 2  # the paused run's call and this run's
        assert await run.record_usage(result) == (
            Usage(model="gpt-4o", input_tokens=70, output_tokens=6, cached_tokens=20),
        )
    assert (await store.get_usage(SID)).models == (
        Usage(model="gpt-4o", requests=2, input_tokens=120, output_tokens=10, cached_tokens=20),
    )


async def test_OAI_11_the_model_name_and_odd_provider_counts(store: SessionStateStore) -> None:
    # A provider reporting no request and more cached tokens than input: one request, and
    # the cached tokens capped (core refuses cached above input).
    odd = SdkUsage(requests=0, input_tokens=10, output_tokens=1)
    odd.input_tokens_details = InputTokensDetails(cached_tokens=15, cache_write_tokens=0)
    agent = Agent(name="A", model=ScriptedModel([say("hi", odd)]))
    async with HelixRun(store, SID) as run:
        result = await Runner.run(agent, "hi", session=run.session, run_config=run.run_config)
        recorded = await run.record_usage(result)
    assert recorded == (
        Usage(
            model="ScriptedModel", requests=1, input_tokens=10, output_tokens=1, cached_tokens=10
        ),
    )
    assert model_name("gpt-4.1") == "gpt-4.1"
    assert model_name(None) == get_default_model()
    blank: Any = ScriptedModel([])
    blank.model = " "
    assert model_name(blank) == "ScriptedModel"
