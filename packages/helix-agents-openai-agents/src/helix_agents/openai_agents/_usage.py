"""The usage of a run's model calls, as core's ``Usage`` per model (OAI-11)."""

from __future__ import annotations

from collections.abc import Sequence

from agents.items import ModelResponse
from agents.models import get_default_model
from agents.models.interface import Model

from helix_agents.core.models import Usage, add_usage

__all__ = ["model_name", "usage_by_model"]


def model_name(model: str | Model | None) -> str:
    """The name a model goes by: the string given, a model object's ``model`` (the SDK's
    OpenAI models, LiteLLM's), else its class name; ``None``: the SDK's default model."""
    if isinstance(model, str):
        return model
    if model is None:
        return get_default_model()
    name = getattr(model, "model", None)
    return name if isinstance(name, str) and name.strip() else type(model).__name__


def usage_by_model(calls: Sequence[tuple[str, ModelResponse]]) -> tuple[Usage, ...]:
    """Each model's usage over ``calls`` (the model's name, its response): one request per
    response, the cached input tokens at most the input tokens."""
    by_model: dict[str, Usage] = {}
    for name, response in calls:
        used = response.usage
        cached = used.input_tokens_details.cached_tokens or 0
        entry = Usage(
            model=name,
            requests=max(used.requests, 1),
            input_tokens=used.input_tokens,
            output_tokens=used.output_tokens,
            cached_tokens=min(cached, used.input_tokens),
        )
        before = by_model.get(name)
        by_model[name] = entry if before is None else add_usage(before, entry)
    return tuple(by_model.values())
