"""ADKF-10: an event's ``usage_metadata`` is counted with the event, once, on every backend."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest
from adk_scripted import APP, USER, run, user
from google.adk.agents import LlmAgent
from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from helix_backends import BACKENDS
from pydantic import Field

from helix_agents.adk import HelixPlugin, HelixSessionService, session_key, user_key
from helix_agents.core import SessionStateStore
from helix_agents.core.models import Usage, UsageTotals

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("stores", BACKENDS, indirect=True)]

SID = session_key(APP, USER, "s1")


def used(
    prompt: int, candidates: int, cached: int | None = None, thoughts: int | None = None
) -> types.GenerateContentResponseUsageMetadata:
    """Gemini's usage of one response, as ADK's events carry it."""
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt,
        candidates_token_count=candidates,
        cached_content_token_count=cached,
        thoughts_token_count=thoughts,
        total_token_count=prompt + candidates + (thoughts or 0),
    )


class Metered(BaseLlm):
    """ADK's model interface answering each call with the next (text, usage, model version)."""

    model: str = "metered"
    steps: list[tuple[str, types.GenerateContentResponseUsageMetadata, str | None]] = Field(
        default_factory=list
    )

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """The next step, as a response with its usage."""
        text, usage, version = self.steps.pop(0)
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=text)]),
            usage_metadata=usage,
            model_version=version,
        )


async def test_adkf10_each_model_events_usage_is_counted_with_it(
    store: SessionStateStore,
) -> None:
    plugin = HelixPlugin(store)
    await plugin.session_service.create_session(app_name=APP, user_id=USER, session_id="s1")
    model = Metered(
        steps=[
            ("Tea.", used(100, 10, cached=60, thoughts=5), "gemini-2.5-flash"),
            ("Still tea.", used(120, 4), None),
        ]
    )
    agent = LlmAgent(name="host", model=model)
    assert await run(plugin, agent, user("A drink?")) == ["Tea."]
    flash = Usage(model="gemini-2.5-flash", input_tokens=100, output_tokens=15, cached_tokens=60)
    assert (await store.get_usage(SID)).models == (flash,)
    assert await run(plugin, agent, user("Again?")) == ["Still tea."]
    unknown = Usage(model="unknown", input_tokens=120, output_tokens=4)
    totals = await store.get_usage(SID)
    assert totals.models == (flash, unknown)
    assert (await store.get_user_usage(user_key(APP, USER))).usage == totals
    # A user's event carries no usage: counted as nothing.
    assert totals.requests == 2


async def test_adkf10_an_event_sent_again_counts_once(store: SessionStateStore) -> None:
    service = HelixSessionService(store)
    session = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    event = Event(
        author="host",
        invocation_id="i1",
        content=types.Content(role="model", parts=[types.Part(text="hi")]),
        usage_metadata=used(30, 3, cached=50),  # more cached than prompt: capped
        model_version="gemini-2.5-pro",
    )
    await service.append_event(session, event)
    again = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert again is not None
    await service.append_event(again, event)  # a retry of the same event: a replay
    assert await store.get_usage(SID) == UsageTotals.of(
        [Usage(model="gemini-2.5-pro", input_tokens=30, output_tokens=3, cached_tokens=30)]
    )
    bare = Event(author="host", invocation_id="i1", content=event.content)
    await service.append_event(again, bare.model_copy(update={"id": "other"}))
    assert (await store.get_usage(SID)).requests == 1
