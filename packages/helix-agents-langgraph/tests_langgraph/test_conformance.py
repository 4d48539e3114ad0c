"""LangGraph's own conformance suite against the saver, on every backend; the report is printed."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.report import ProgressCallbacks

from helix_agents.core import SessionStateStore
from helix_agents.langgraph import HelixCheckpointSaver


class Backend(Protocol):
    """The ``backend`` fixture: a backend's name, and a store opener on the test's data."""

    name: str
    open: Callable[[], AbstractAsyncContextManager[SessionStateStore]]


# Every base capability, and every optional one: the saver overrides all their methods.
CLAIMED = {
    "put",
    "put_writes",
    "get_tuple",
    "list",
    "delete_thread",
    "copy_thread",
    "prune",
    "delete_for_runs",
}

pytestmark = pytest.mark.anyio


async def test_conformance(backend: Backend, capsys: pytest.CaptureFixture[str]) -> None:
    async def saver() -> AsyncIterator[HelixCheckpointSaver]:
        async with backend.open() as store:
            yield HelixCheckpointSaver(store)

    registered = checkpointer_test(name=f"HelixCheckpointSaver on {backend.name}")(saver)
    with capsys.disabled():
        report = await validate(registered, progress=ProgressCallbacks.verbose())
        report.print_report()
    results = report.results
    assert {cap for cap, result in results.items() if result.detected} == CLAIMED
    failed = {cap: results[cap].failures for cap in CLAIMED if not results[cap].passed}
    assert not failed
    assert all(results[cap].tests_passed > 0 for cap in CLAIMED)
