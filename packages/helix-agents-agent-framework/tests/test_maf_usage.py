"""MAF-12: an agent run's ``usage_details`` is saved with its messages, on four backends."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from agent_framework import (
    Agent,
    AgentSession,
    BaseChatClient,
    ChatResponse,
    Content,
    FunctionInvocationLayer,
    Message,
    UsageDetails,
    tool,
)
from helix_backends import BACKENDS

from helix_agents.agent_framework import HelixHistoryProvider
from helix_agents.core import MessageCountConflictError, SessionStateStore
from helix_agents.core.models import Usage, UsageTotals

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("stores", BACKENDS, indirect=True)]


@tool
def weather(city: str) -> str:
    """The weather in ``city``."""
    return "sunny"


class MeteredClient(FunctionInvocationLayer[Any], BaseChatClient[Any]):
    """A chat client whose responses report their usage and model, as providers' do: the
    first call asks for the weather, the next answers."""

    def __init__(self, model: str | None = "gpt-4o", gate: asyncio.Barrier | None = None):
        super().__init__()
        self.model, self.gate, self.calls = model, gate, 0

    def _inner_get_response(
        self, *, messages: Sequence[Message], stream: bool, options: Mapping[str, Any], **kw: Any
    ) -> Any:
        async def answer() -> ChatResponse:
            self.calls += 1
            if self.gate is not None:
                await asyncio.wait_for(self.gate.wait(), 10)
            if messages[-1].role != "tool":
                call = Content.from_function_call(
                    f"c{self.calls}", "weather", arguments={"city": "x"}
                )
                usage = UsageDetails(
                    input_token_count=100, output_token_count=5, cache_read_input_token_count=40
                )
                return ChatResponse(
                    messages=[Message("assistant", [call])], model=self.model, usage_details=usage
                )
            done = UsageDetails(input_token_count=150, output_token_count=8)
            return ChatResponse(
                messages=[Message("assistant", ["sunny"])], model=self.model, usage_details=done
            )

        return answer()


async def test_maf12_a_runs_usage_is_saved_with_its_messages(store: SessionStateStore) -> None:
    provider = HelixHistoryProvider(store, user_id="ada")
    agent = Agent(MeteredClient(), tools=[weather], context_providers=[provider])
    response = await agent.run("weather?", session=AgentSession(session_id="chat"))
    assert response.usage_details is not None  # the framework's sum of the two calls
    gpt = Usage(model="gpt-4o", input_tokens=250, output_tokens=13, cached_tokens=40)
    assert (await store.get_usage("chat")).models == (gpt,)
    unnamed = Agent(MeteredClient(model=None), tools=[weather], context_providers=[provider])
    await unnamed.run("again?", session=AgentSession(session_id="chat"))
    unknown = gpt.model_copy(update={"model": "unknown"})
    assert await store.get_usage("chat") == UsageTotals.of([gpt, unknown])
    assert (await store.get_user_usage("ada")).usage == await store.get_usage("chat")


async def test_maf12_a_refused_save_records_no_usage(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    gate = asyncio.Barrier(2)
    runs = [
        Agent(
            MeteredClient(gate=gate), tools=[weather], context_providers=[HelixHistoryProvider(s)]
        ).run("weather?", session=AgentSession(session_id="chat"))
        for s in (store, other_store)
    ]
    results = await asyncio.gather(*runs, return_exceptions=True)
    assert sum(isinstance(r, MessageCountConflictError) for r in results) == 1, results
    gpt = Usage(model="gpt-4o", input_tokens=250, output_tokens=13, cached_tokens=40)
    assert (await store.get_usage("chat")).models == (gpt,)
