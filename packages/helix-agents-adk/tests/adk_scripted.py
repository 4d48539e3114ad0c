"""A scripted model and one-call runs for the tests of ``HelixPlugin``."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.genai import types
from pydantic import Field

from helix_agents.adk import HelixPlugin

APP, USER = "runs", "ada"
Step = types.Part | Callable[[LlmRequest], types.Part] | BaseException


def say(text: str) -> types.Part:
    """A text answer."""
    return types.Part(text=text)


def call(name: str, args: dict[str, Any], call_id: str) -> types.Part:
    """A function call."""
    return types.Part(function_call=types.FunctionCall(name=name, args=args, id=call_id))


def user(text: str) -> types.Content:
    """A user message."""
    return types.Content(role="user", parts=[say(text)])


class Scripted(BaseLlm):
    """Answers each call with the next step (an exception step raises), keeps the requests."""

    model: str = "scripted"
    steps: list[Any] = Field(default_factory=list)
    requests: list[LlmRequest] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """The next step of the script."""
        self.requests.append(llm_request.model_copy(deep=True))
        step = self.steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        part = step(llm_request) if callable(step) else step
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def scripted(*steps: Step) -> Scripted:
    """A model answering ``steps`` in order."""
    return Scripted(steps=list(steps))


def texts(request: LlmRequest) -> list[str]:
    """Every text part of a request, in order."""
    return [p.text for c in request.contents for p in c.parts or () if p.text]


def result_of(request: LlmRequest) -> Any:
    """The response of the function response the request ends with."""
    parts = request.contents[-1].parts or []
    response = parts[0].function_response if parts else None
    return None if response is None else response.response


async def run(
    plugin: HelixPlugin, agent: LlmAgent, message: types.Content, session_id: str = "s1"
) -> list[str]:
    """One ``run_async`` invocation through ``plugin``: the texts of its events."""
    app = App(name=APP, root_agent=agent, plugins=[plugin])
    runner = Runner(app=app, session_service=plugin.session_service)
    said: list[str] = []
    async for event in runner.run_async(user_id=USER, session_id=session_id, new_message=message):
        parts = event.content.parts if event.content and event.content.parts else []
        said += [p.text for p in parts if p.text]
    return said
