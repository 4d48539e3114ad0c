"""The order every server is looked for in, and the reason given when none is found."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass

from .._base import backend_unavailable

__all__ = ["Attempt", "Outcome", "Search", "Step", "require", "search"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one place answered: a server's URL, or why not (``final``: look no further)."""

    url: str | None
    why: str = ""
    final: bool = False


Step = Callable[[ExitStack], Outcome]
"""Tries one place; whatever it starts, it leaves on the stack to stop."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """One place tried and what it answered."""

    place: str
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Search:
    """The places tried for a server of ``what``, in order; ``url`` is ``None`` if none had one."""

    what: str
    attempts: tuple[Attempt, ...]

    @property
    def url(self) -> str | None:
        """The URL of the server found."""
        return self.attempts[-1].outcome.url if self.attempts else None

    @property
    def found_at(self) -> str | None:
        """The place the server was found at."""
        return self.attempts[-1].place if self.url else None

    @property
    def reason(self) -> str:
        """Why there is no server: each place tried and its answer."""
        tried = "; ".join(f"{a.place}: {a.outcome.why}" for a in self.attempts)
        return f"no {self.what} server ({tried})"


def search(what: str, steps: Sequence[tuple[str, Step]], stack: ExitStack) -> Search:
    """Try ``steps`` in order until one gives a URL or says to stop."""
    attempts: list[Attempt] = []
    for place, step in steps:
        outcome = step(stack)
        attempts.append(Attempt(place, outcome))
        if outcome.url is not None or outcome.final:
            break
    return Search(what, tuple(attempts))


def require(found: Search) -> str:
    """The URL found, else skip with the reason (fail under ``HELIX_REQUIRE_BACKENDS=1``)."""
    if found.url is None:
        backend_unavailable(found.reason)
    assert found.url is not None
    return found.url
