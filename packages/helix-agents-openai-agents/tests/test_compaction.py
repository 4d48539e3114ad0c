"""The SDK's compaction over HelixSession: whole-history and suffix replacement, atomically."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast
from unittest.mock import AsyncMock, MagicMock

import pytest
from agents import Agent, RunConfig, Runner, TResponseInputItem
from agents.memory import OpenAIResponsesCompactionSession
from agents.testing import ScriptedModel, assistant_message

from helix_agents.core import SessionStateStore
from helix_agents.openai_agents import HelixSession

pytestmark = pytest.mark.anyio

SUMMARY: dict[str, Any] = {"type": "compaction", "id": "cmp", "encrypted_content": "summary"}


def said(*texts: str) -> list[TResponseInputItem]:
    """User messages with these texts."""
    return [{"role": "user", "content": t} for t in texts]


def compactor(session: HelixSession, **options: Any) -> OpenAIResponsesCompactionSession:
    """The SDK's compaction session over ``session``, whose API answers with SUMMARY."""
    client = MagicMock()
    client.responses.compact = AsyncMock(return_value=SimpleNamespace(output=[SUMMARY]))
    return OpenAIResponsesCompactionSession(
        session.session_id,
        session,
        client=client,
        compaction_mode="input",
        should_trigger_compaction=lambda _: True,
        **options,
    )


async def test_manual_compaction_replaces_the_history(store: SessionStateStore) -> None:
    session = HelixSession("s", store)
    await session.add_items(said("a", "b", "c"))
    await compactor(session).run_compaction({"force": True})
    assert await HelixSession("s", store).get_items() == [SUMMARY]
    assert await store.get_message_count("s") == 1


async def test_automatic_compaction_replaces_the_turn_suffix(store: SessionStateStore) -> None:
    session = HelixSession("s", store)
    await session.add_items(said("old 1", "old 2"))
    spy = AsyncMock(wraps=session._get_compaction_snapshot)
    session._get_compaction_snapshot = spy  # type: ignore[method-assign]
    wrapped = compactor(session)
    agent = Agent(name="a", model=ScriptedModel([[assistant_message("done")]]))
    # The model saw one stored item ("old 2"), so that exchange is what gets compacted.
    limited = RunConfig(session_settings={"limit": 1})
    await Runner.run(agent, "new", session=wrapped, run_config=limited)
    spy.assert_awaited()
    assert await HelixSession("s", store).get_items() == [*said("old 1"), SUMMARY]


async def test_suffix_replacement_refuses_a_changed_suffix(
    store: SessionStateStore, other_store: SessionStateStore
) -> None:
    session, other = HelixSession("s", store), HelixSession("s", other_store)
    await session.add_items(said("a", "b", "c"))

    snapshot = await session._get_compaction_snapshot(2)
    assert snapshot is not None and snapshot.items == said("b", "c") and not snapshot.complete
    # Same count, other rows: popped and appended by another writer.
    await other.pop_item()
    await other.add_items(said("c"))
    assert await snapshot.replace_suffix(0, cast(Any, [SUMMARY])) is False

    snapshot = await session._get_compaction_snapshot(5)
    assert snapshot is not None and snapshot.complete
    await other.add_items(said("d"))
    assert await snapshot.replace_suffix(1, cast(Any, [SUMMARY])) is False
    assert await session.get_items() == said("a", "b", "c", "d")

    snapshot = await session._get_compaction_snapshot(2)
    assert snapshot is not None
    assert await snapshot.replace_suffix(1, cast(Any, [SUMMARY])) is True
    assert await session.get_items() == [*said("a", "b", "c"), SUMMARY]
    assert await snapshot.replace_suffix(0, []) is False


async def test_suffix_replacement_prunes_an_expired_prefix(store: SessionStateStore) -> None:
    session = HelixSession("s", store)
    await session.add_items(said("expired 1", "expired 2", "live", "tail"))
    snapshot = await session._get_compaction_snapshot(
        1, prune_prefix=lambda item: str(cast(Any, item)["content"]).startswith("expired")
    )
    assert snapshot is not None and snapshot.items == said("tail")
    assert await snapshot.replace_suffix(0, cast(Any, [SUMMARY])) is True
    assert await session.get_items() == [*said("live"), SUMMARY]


async def test_a_transforming_subclass_gets_no_snapshot(store: SessionStateStore) -> None:
    class Shouting(HelixSession):
        async def get_items(self, limit: int | None = None, **kw: Any) -> list[Any]:
            return await super().get_items(limit)

    session = Shouting("s", store)
    await session.add_items(said("a"))
    assert await session._get_compaction_snapshot(1) is None
    assert await session._atomic_replace_items(said("b")) is False
    assert await session.get_items() == said("a")
