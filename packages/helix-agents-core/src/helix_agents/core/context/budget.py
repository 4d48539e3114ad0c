"""The token budget of a context window: when to warn, when to compact, what to offload."""

from __future__ import annotations

import importlib
import json
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from ..messages import JsonObject, Message
from .history import row_text

__all__ = [
    "Budget",
    "BudgetLevel",
    "EstimateCounter",
    "TiktokenCounter",
    "TokenCounter",
    "Usage",
    "default_counter",
]

logger = logging.getLogger("helix_agents.core.context")

BudgetLevel: TypeAlias = Literal["ok", "warn", "compact"]
"""How full the context window is: fine, near the limit, or time to compact."""
# Every row costs a few tokens of framing (role, separators) beyond its text.
ROW_OVERHEAD = 4
_WORDLIKE = re.compile(r"[A-Za-z0-9]")
_OTHER = re.compile(r"[^\sA-Za-z0-9]")


class TokenCounter(Protocol):
    """Counts the tokens of a text for one tokenizer."""

    name: str

    def count(self, text: str) -> int:
        """The number of tokens of ``text``."""
        ...


class EstimateCounter:
    """A tokenizer-free estimate that errs high, so the budget compacts early rather than late.

    ASCII letters and digits cost one token per four; every other character
    that is not whitespace (punctuation, JSON syntax, any non-ASCII letter)
    costs one. English prose lands near the usual four characters a token;
    dense JSON, minified code and non-Latin scripts count higher, as real
    tokenizers do, instead of being undercounted by a characters-over-four rule.
    """

    name = "estimate"

    def count(self, text: str) -> int:
        """The estimate for ``text``."""
        word = _WORDLIKE.subn("", text)[1]
        other = _OTHER.subn("", text)[1]
        return math.ceil(word / 4) + other


class TiktokenCounter:
    """Exact counts with ``tiktoken`` (``pip install helix-agents-core[tiktoken]``)."""

    def __init__(self, encoding: str = "o200k_base") -> None:
        # An optional dependency, so imported by name: no stubs are needed to type-check.
        tiktoken = importlib.import_module("tiktoken")
        self._encoding = tiktoken.get_encoding(encoding)
        self.name = f"tiktoken:{encoding}"

    def count(self, text: str) -> int:
        """The token count of ``text``."""
        return len(self._encoding.encode(text, disallowed_special=()))


def default_counter(encoding: str = "o200k_base") -> TokenCounter:
    """``tiktoken`` when it is installed and its encoding loads, else :class:`EstimateCounter`."""
    try:
        return TiktokenCounter(encoding)
    except ImportError:
        return EstimateCounter()
    except Exception as exc:  # tiktoken fetches encodings on first use; offline that fails
        logger.warning("tiktoken could not load %r (%s); using the estimate", encoding, exc)
        return EstimateCounter()


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens in use against the effective limit, and what the budget says to do."""

    tokens: int
    limit: int
    level: BudgetLevel

    @property
    def fraction(self) -> float:
        """Tokens over the effective limit."""
        return self.tokens / self.limit


@dataclass(frozen=True, slots=True)
class Budget:
    """A model's context window less an output reserve, with warn and compact thresholds.

    The effective limit is ``context_window * (1 - output_reserve)``; usage at
    ``warn_at`` of it warns, at ``compact_at`` compacts. A tool output longer
    than ``offload_tokens`` is offloaded. All of it is in tokens of ``counter``.
    """

    context_window: int
    output_reserve: float = 0.15
    warn_at: float = 0.60
    compact_at: float = 0.75
    offload_tokens: int = 2_000
    counter: TokenCounter = field(default_factory=default_counter)

    def __post_init__(self) -> None:
        if self.context_window < 1 or self.offload_tokens < 1:
            raise ValueError("context_window and offload_tokens must be positive")
        if not 0 <= self.output_reserve < 1 or not 0 < self.warn_at <= self.compact_at <= 1:
            raise ValueError("need 0 <= output_reserve < 1 and 0 < warn_at <= compact_at <= 1")

    @property
    def limit(self) -> int:
        """The effective limit in tokens."""
        return max(1, math.floor(self.context_window * (1 - self.output_reserve)))

    def tokens(self, rows: Sequence[Message], tool_schemas: Sequence[JsonObject] = ()) -> int:
        """Tokens of ``rows`` plus the tool schemas sent with them."""
        total = sum(self.counter.count(row_text(row)) + ROW_OVERHEAD for row in rows)
        return total + sum(self.counter.count(_schema_text(s)) for s in tool_schemas)

    def measure(self, rows: Sequence[Message], tool_schemas: Sequence[JsonObject] = ()) -> Usage:
        """Usage of ``rows`` and ``tool_schemas``, and whether to warn or compact."""
        tokens = self.tokens(rows, tool_schemas)
        level: BudgetLevel = "ok"
        if tokens >= self.compact_at * self.limit:
            level = "compact"
        elif tokens >= self.warn_at * self.limit:
            level = "warn"
        return Usage(tokens=tokens, limit=self.limit, level=level)

    def should_offload(self, output: str) -> bool:
        """Whether a tool output is long enough, in tokens, to store and summarise."""
        return self.counter.count(output) > self.offload_tokens


def _schema_text(schema: Any) -> str:
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
