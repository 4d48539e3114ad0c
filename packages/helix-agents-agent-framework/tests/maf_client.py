"""A scripted chat client for the tests: answers from the messages it is sent, offline.

A public ``BaseChatClient`` subclass with the framework's ``FunctionInvocationLayer``, as
the framework's docs show a custom client; it keeps every request's messages so a test
can check what the model saw.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from agent_framework import (
    BaseChatClient,
    ChatResponse,
    Content,
    FunctionInvocationLayer,
    Message,
)

__all__ = ["GatedClient", "ScriptedClient", "seen_texts"]


def seen_texts(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """``(role, text)`` of each message, with a function call or result as its kind."""
    return [(m.role, m.text or ",".join(c.type for c in m.contents)) for m in messages]


class ScriptedClient(FunctionInvocationLayer[Any], BaseChatClient[Any]):
    """Says "reply N to TEXT"; "call TOOL" calls that tool; a tool result is reported."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[list[Message]] = []

    def _inner_get_response(
        self,
        *,
        messages: Sequence[Message],
        stream: bool,
        options: Mapping[str, Any],
        **kwargs: Any,
    ) -> Any:
        self.requests.append(list(messages))

        async def answer() -> ChatResponse:
            last = messages[-1]
            if last.role == "tool":
                result = last.contents[0].result
                return ChatResponse(messages=[Message("assistant", [f"tool said {result}"])])
            if last.text.startswith("call "):
                call = Content.from_function_call(
                    f"c{len(self.requests)}", last.text[5:], arguments={"x": 1}
                )
                return ChatResponse(messages=[Message("assistant", [call])])
            return ChatResponse(
                messages=[Message("assistant", [f"reply {len(self.requests)} to {last.text}"])]
            )

        return answer()


class GatedClient(ScriptedClient):
    """A ``ScriptedClient`` that answers once every party of ``gate`` asked: runs sharing
    one barrier have all loaded their history before any of them saves."""

    def __init__(self, gate: asyncio.Barrier) -> None:
        super().__init__()
        self.gate = gate

    def _inner_get_response(self, **kwargs: Any) -> Any:
        answer = super()._inner_get_response(**kwargs)

        async def later() -> ChatResponse:
            await asyncio.wait_for(self.gate.wait(), 10)
            result: ChatResponse = await answer
            return result

        return later()
