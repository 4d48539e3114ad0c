"""The token usage of a run's chat model calls, from LangChain's ``usage_metadata``
(LGF-14)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import LLMResult

from helix_agents.core.models import Usage, add_usage

__all__ = ["UNKNOWN_MODEL", "UsageCollector", "usage_by_model"]

UNKNOWN_MODEL = "unknown"
"""The model name of a call whose model says no name."""


class UsageCollector(AsyncCallbackHandler):
    """A callback on the run's config: each chat model call's ``usage_metadata``, with the
    model's name, in the order the calls ended."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, UsageMetadata]] = []
        self._names: dict[UUID, str] = {}

    async def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Note the model name LangChain's tracing metadata gives (``ls_model_name``)."""
        name = (metadata or {}).get("ls_model_name")
        if isinstance(name, str) and name.strip():
            self._names[run_id] = name

    async def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        """Keep the usage of each message the call returned."""
        noted = self._names.pop(run_id, None)
        for generations in response.generations:
            for generation in generations:
                message = getattr(generation, "message", None)
                if isinstance(message, AIMessage) and message.usage_metadata:
                    self.calls.append((_model_name(message, noted), message.usage_metadata))


def _model_name(message: AIMessage, noted: str | None) -> str:
    """The provider's name of the model (``response_metadata``: ``model_name``, or
    ``model``), else the one LangChain noted at the call's start, else ``unknown``."""
    for key in ("model_name", "model"):
        name = message.response_metadata.get(key)
        if isinstance(name, str) and name.strip():
            return name
    return noted or UNKNOWN_MODEL


def usage_by_model(calls: Sequence[tuple[str, UsageMetadata]]) -> tuple[Usage, ...]:
    """Each model's usage over ``calls``: one request per call; the cache reads
    (``input_token_details.cache_read``) as cached tokens, at most the input tokens."""
    by_model: dict[str, Usage] = {}
    for name, used in calls:
        cached = (used.get("input_token_details") or {}).get("cache_read") or 0
        entry = Usage(
            model=name,
            input_tokens=used["input_tokens"],
            output_tokens=used["output_tokens"],
            cached_tokens=min(cached, used["input_tokens"]),
        )
        before = by_model.get(name)
        by_model[name] = entry if before is None else add_usage(before, entry)
    return tuple(by_model.values())
