"""Fixtures of the adapter's tests: the framework's in-memory history, and ours on four backends.

``subject`` wraps Agent Framework's ``InMemoryHistoryProvider`` (the reference the
restated contract is checked against) or ``HelixHistoryProvider`` on memory, SQLite,
PostgreSQL or Redis. Servers come from the shared session fixtures
(``helix_agents.contract.servers``, as in contract_tests/support/helix_fixtures.py); a
missing one skips, or fails under ``HELIX_REQUIRE_BACKENDS=1``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from agent_framework import AgentSession, HistoryProvider, InMemoryHistoryProvider, Message
from helix_backends import BACKENDS, Stores
from helix_fixtures import found_server

from helix_agents.agent_framework import HelixHistoryProvider
from helix_agents.core import SessionStateStore

SUBJECTS = ("maf-in-memory", *BACKENDS)

__all__ = [
    "SUBJECTS",
    "Subject",
    "other_store",
    "store",
    "stores",
    "subject",
]


class Subject:
    """A history provider under test, with the session state the framework would pass it.

    ``make(**flags)`` builds another provider of the same kind on the same data;
    ``restarted()`` is the subject after a restart: for the framework's in-memory provider
    (whose history is the session's state) the states go through ``AgentSession``'s own
    serialization, for ours a provider on another store object over the same data.
    """

    def __init__(
        self,
        name: str,
        make: Callable[..., HistoryProvider],
        make_other: Callable[..., HistoryProvider] | None,
    ) -> None:
        self.name = name
        self.make = make
        self._make_other = make_other
        self.provider = make()
        self.states: dict[str, dict[str, Any]] = {}

    @property
    def is_reference(self) -> bool:
        """Whether this is the framework's own provider."""
        return self._make_other is None

    def state(self, session_id: str) -> dict[str, Any]:
        """The provider-scoped session state of ``session_id``."""
        return self.states.setdefault(session_id, {})

    async def get(self, session_id: str) -> list[Message]:
        """``get_messages`` as the framework calls it."""
        return await self.provider.get_messages(session_id, state=self.state(session_id))

    async def save(self, session_id: str, messages: Sequence[Message]) -> None:
        """``save_messages`` as the framework calls it."""
        await self.provider.save_messages(session_id, messages, state=self.state(session_id))

    def restarted(self) -> Subject:
        """The same history seen from a new process."""
        if self._make_other is None:
            again = Subject(self.name, self.make, None)
            source = self.provider.source_id
            for session_id, state in self.states.items():
                session = AgentSession(session_id=session_id)
                session.state[source] = state
                text = json.dumps(session.to_dict())
                again.states[session_id] = AgentSession.from_dict(json.loads(text)).state[source]
            return again
        return Subject(self.name, self._make_other, self._make_other)


@pytest.fixture(params=SUBJECTS)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores | None]:
    """Stores on one backend (``None`` for the framework's own provider); purged after."""
    if request.param == "maf-in-memory":
        yield None
        return
    found = Stores(request.param, found_server(request, request.param), tmp_path)
    yield found
    found.purge()


@pytest.fixture
async def store(stores: Stores | None) -> AsyncIterator[SessionStateStore]:
    """An open store on the test's backend; ours only."""
    assert stores is not None, "a test that reads the store runs on our provider only"
    async with stores.store("main") as opened:
        yield opened


@pytest.fixture
async def other_store(stores: Stores | None) -> AsyncIterator[SessionStateStore]:
    """A second store on the same data as ``store``: another process, in effect."""
    assert stores is not None, "a test that reads the store runs on our provider only"
    async with stores.store("main") as opened:
        yield opened


@pytest.fixture
async def subject(stores: Stores | None) -> AsyncIterator[Subject]:
    """The framework's in-memory provider, or ours on the test's backend."""
    if stores is None:
        yield Subject("maf-in-memory", lambda **flags: InMemoryHistoryProvider(**flags), None)
        return
    async with stores.store("main") as one, stores.store("main") as two:

        def ours(**flags: Any) -> HistoryProvider:
            return HelixHistoryProvider(one, **flags)

        def theirs(**flags: Any) -> HistoryProvider:
            return HelixHistoryProvider(two, **flags)

        yield Subject(stores.backend, ours, theirs)
