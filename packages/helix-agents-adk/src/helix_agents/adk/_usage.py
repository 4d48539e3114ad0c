"""The token usage an ADK event carries, as core's ``Usage`` (ADKF-10)."""

from __future__ import annotations

from google.adk.events.event import Event

from helix_agents.core.models import Usage

__all__ = ["UNKNOWN_MODEL", "usage_of_event"]

UNKNOWN_MODEL = "unknown"
"""The model name of an event whose ``model_version`` is not set."""


def usage_of_event(event: Event) -> tuple[Usage, ...]:
    """The usage of the model response ``event`` is (``usage_metadata``), as one ``Usage``
    of its ``model_version``: the prompt and tool-use prompt tokens as input, the candidate
    and thought tokens as output, the cached content tokens (at most the input) as cached;
    ``()`` for an event without usage."""
    used = event.usage_metadata
    if used is None:
        return ()
    given = used.prompt_token_count, used.candidates_token_count, used.cached_content_token_count
    if all(count is None for count in given):
        return ()
    input_tokens = (used.prompt_token_count or 0) + (used.tool_use_prompt_token_count or 0)
    output_tokens = (used.candidates_token_count or 0) + (used.thoughts_token_count or 0)
    model = event.model_version
    return (
        Usage(
            model=model if model and model.strip() else UNKNOWN_MODEL,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cached_tokens=min(used.cached_content_token_count or 0, input_tokens),
        ),
    )
