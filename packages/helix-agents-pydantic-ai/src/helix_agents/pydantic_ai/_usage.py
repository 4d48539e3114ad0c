"""The token usage of a run's model responses, as core's ``Usage`` per model (PAI-8)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from pydantic_ai.messages import ModelMessage, ModelResponse

from helix_agents.core.models import Usage, add_usage
from helix_agents.core.usage import COST_PLACES, MAX_USAGE_COST

__all__ = ["UNKNOWN_MODEL", "usage_of_messages"]

UNKNOWN_MODEL = "unknown"
"""The model name of a response whose ``model_name`` is not set."""
_PLACES = Decimal(1).scaleb(-COST_PLACES)


def usage_of_messages(messages: Sequence[ModelMessage]) -> tuple[Usage, ...]:
    """Each model's usage over the ``ModelResponse`` messages of ``messages``: one request
    per response, its ``usage`` (``cache_read_tokens`` as cached, at most the input
    tokens) and, where the provider reported one, its ``cost`` (to 12 decimal places)."""
    by_model: dict[str, Usage] = {}
    for message in messages:
        if not isinstance(message, ModelResponse):
            continue
        used = message.usage
        name = message.model_name if message.model_name and message.model_name.strip() else None
        cost = getattr(used, "cost", None)  # pydantic-ai 2.x: a provider-reported cost
        entry = Usage(
            model=name or UNKNOWN_MODEL,
            input_tokens=used.input_tokens,
            output_tokens=used.output_tokens,
            cached_tokens=min(used.cache_read_tokens, used.input_tokens),
            cost=_cost(cost),
        )
        before = by_model.get(entry.model)
        by_model[entry.model] = entry if before is None else add_usage(before, entry)
    return tuple(by_model.values())


def _cost(cost: object) -> Decimal | None:
    """A reported cost core can keep, to 12 places; one it could not (negative, too large,
    not a number) is left out rather than refusing the save."""
    if isinstance(cost, Decimal) and cost.is_finite() and 0 <= cost <= MAX_USAGE_COST:
        return cost.quantize(_PLACES)
    return None
