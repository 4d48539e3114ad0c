"""The token usage of an agent run's response, as core's ``Usage`` (MAF-12)."""

from __future__ import annotations

from typing import Any

from agent_framework import AgentResponse

from helix_agents.core.models import Usage

__all__ = ["UNKNOWN_MODEL", "USAGE_KEY", "usage_of_response"]

UNKNOWN_MODEL = "unknown"
"""The model name of a response that names none."""
USAGE_KEY = "helix.usage"
"""The key of the run's state under which ``after_run`` hands the usage to the save."""


def usage_of_response(response: AgentResponse[Any] | None) -> tuple[Usage, ...]:
    """The run's ``usage_details`` (the framework sums the run's model calls into them) as
    one request of the model the response names (its raw ``ChatResponse.model``); the cache
    reads as cached tokens, at most the input tokens; ``()`` without usage."""
    details = None if response is None else response.usage_details
    if not details:
        return ()
    input_tokens = details.get("input_token_count") or 0
    output_tokens = details.get("output_token_count") or 0
    cached = details.get("cache_read_input_token_count") or 0
    raw = getattr(response, "raw_representation", None)
    model = getattr(raw, "model", None)
    return (
        Usage(
            model=model if isinstance(model, str) and model.strip() else UNKNOWN_MODEL,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cached_tokens=min(cached, input_tokens),
        ),
    )
