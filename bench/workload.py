"""One agent turn, and the interface every system under test implements.

A turn is a batch of three rows appended at once: a ~200-character user
message, an assistant message with one tool call, and a ~500-character tool
result. Each system stores them in its own native shape (helix ``Message``
rows, Agents SDK Responses items, LangChain messages); building that shape is
part of the timed append, as it is in an application.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass

__all__ = ["Subject", "Turn", "make_turn"]

_WORDS = (
    "the agent looks up the order history before it answers the customer about "
    "the refund policy and checks the shipping status of every parcel in the account "
)


def _text(seed: int, length: int) -> str:
    # Unique per turn, so no layer can cache a repeated payload.
    head = f"[{seed}] "
    body = (_WORDS * (length // len(_WORDS) + 2))[: length - len(head)]
    return head + body


@dataclass(frozen=True, slots=True)
class Turn:
    """The content of one turn, independent of any system's row type."""

    user_text: str
    call_id: str
    tool_name: str
    arguments: str
    tool_output: str


def make_turn(seed: int) -> Turn:
    """Turn number ``seed``: 200 + ~60 + 500 characters of content."""
    return Turn(
        user_text=_text(seed, 200),
        call_id=f"call_{seed:08d}",
        tool_name="lookup_order",
        arguments=json.dumps({"order_id": f"A-{seed:06d}", "fields": ["status", "items"]}),
        tool_output=_text(seed + 1, 500),
    )


class Subject(ABC):
    """A session store under test, driven one turn at a time.

    ``name`` labels it in the results; ``server`` is ``memory``, ``sqlite``,
    ``postgres`` or ``redis``; ``family`` is ``helix``, ``openai-agents`` or
    ``langgraph``. Every subject keeps its data apart (its own file, schema or
    key prefix) and :meth:`close` removes it.
    """

    name: str
    server: str
    family: str

    @abstractmethod
    async def open(self) -> None:
        """Connect and create the schema; remove data an earlier run left behind."""

    @abstractmethod
    async def start(self, session_id: str) -> None:
        """Make ``session_id`` ready for appends (create it, where the system has sessions)."""

    @abstractmethod
    async def append(self, session_id: str, turn: Turn, expected: int) -> None:
        """Append the turn's three rows; ``expected`` is the row count before them."""

    @abstractmethod
    async def read(self, session_id: str, last: int) -> int:
        """Read the last ``last`` rows back; return how many came."""

    @abstractmethod
    async def storage_bytes(self) -> int | None:
        """Bytes the system's data takes on disk or in memory now (``None``: not measurable)."""

    @abstractmethod
    async def close(self) -> None:
        """Remove the data and disconnect."""
