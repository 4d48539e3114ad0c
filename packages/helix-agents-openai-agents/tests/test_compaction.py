"""The SDK's compaction over HelixSession: whole-history and suffix replacement, atomically;
what it replaces archived where the run's strategy preserves history (OAI-10)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast
from unittest.mock import AsyncMock, MagicMock

import pytest
from agents import Agent, RunConfig, Runner, TResponseInputItem
from agents.memory import OpenAIResponsesCompactionSession
from agents.testing import ScriptedModel, assistant_message
from run_helpers import answer

from helix_agents.core import RunSupersededError, SessionStateStore, ValidationError
from helix_agents.core.context import ContextStore
from helix_agents.openai_agents import HelixRun, HelixSession

pytestmark = pytest.mark.anyio

SUMMARY: dict[str, Any] = {"type": "compaction", "id": "cmp", "encrypted_content": "summary"}


def said(*texts: str) -> list[TResponseInputItem]:
    """User messages with these texts."""
    return [{"role": "user", "content": t} for t in texts]


def compactor(
    session: HelixSession, output: list[Any] | None = None, **options: Any
) -> OpenAIResponsesCompactionSession:
    """The SDK's compaction session over ``session``, whose API answers with ``output``
    (default: SUMMARY alone)."""
    client = MagicMock()
    answered = SimpleNamespace(output=[SUMMARY] if output is None else output)
    client.responses.compact = AsyncMock(return_value=answered)
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


async def archived(store: SessionStateStore, grep: str) -> list[tuple[int, str, bool]]:
    """``(index, line, archived)`` of the history hits of session "s", newest first."""
    found = await cast(ContextStore, store).search_history("s", grep=grep)
    return [(h.index, h.line, h.archived) for h in found.hits]


@pytest.mark.parametrize("strategy", ["hybrid", "dynamic", "static"])
async def test_OAI_10_what_compaction_replaces_is_archived_where_history_is_preserved(
    store: SessionStateStore, strategy: Any
) -> None:
    model = ScriptedModel([answer("Noted: the token is XK-4471.")])
    async with HelixRun(store, "s", strategy=strategy) as run:
        assert run.session.archive_compacted is (strategy != "static")
        agent = Agent(name="A", model=model)
        prompt = "Remember the deploy token XK-4471."
        await Runner.run(agent, prompt, session=run.session, run_config=run.run_config)
        await compactor(run.session).run_compaction({"force": True})
    assert await HelixSession("s", store).get_items() == [SUMMARY]
    found = await archived(store, "XK-4471")
    if strategy == "static":
        assert found == []
    else:
        assert found == [(1, "Noted: the token is XK-4471.", True), (0, prompt, True)]


async def test_OAI_10_compaction_archives_only_what_it_removes(store: SessionStateStore) -> None:
    async with HelixRun(store, "s", strategy="hybrid") as run:
        session = run.session
        await session.add_items(said("keep 1", "gone 2", "gone 3"))
        snapshot = await session._get_compaction_snapshot(2)
        assert snapshot is not None
        assert await snapshot.replace_suffix(0, cast(Any, [SUMMARY])) is True
        # The API may hand items back as they were: "keep 1" is carried again, not archived.
        await compactor(session, [*said("keep 1"), SUMMARY]).run_compaction({"force": True})
        assert await session.get_items() == [*said("keep 1"), SUMMARY]
    assert await archived(store, "keep|gone") == [
        (0, "keep 1", False),
        (2, "gone 3", True),
        (1, "gone 2", True),
    ]


async def test_OAI_10_a_pruned_prefix_is_archived_the_kept_rows_are_not(
    store: SessionStateStore,
) -> None:
    async with HelixRun(store, "s", strategy="hybrid") as run:
        await run.session.add_items(said("expired 1", "live", "tail"))
        snapshot = await run.session._get_compaction_snapshot(
            1, prune_prefix=lambda item: str(cast(Any, item)["content"]).startswith("expired")
        )
        assert snapshot is not None
        assert await snapshot.replace_suffix(0, cast(Any, [SUMMARY])) is True
    assert await HelixSession("s", store).get_items() == [*said("live"), SUMMARY]
    assert await archived(store, "expired|live|tail") == [
        (0, "live", False),
        (2, "tail", True),
        (0, "expired 1", True),
    ]


async def test_OAI_10_a_session_alone_archives_nothing_unless_asked(
    store: SessionStateStore,
) -> None:
    session = HelixSession("s", store)
    assert session.archive_compacted is False
    await session.add_items(said("a"))
    await compactor(session).run_compaction({"force": True})
    assert await archived(store, "a") == []
    asked = HelixSession("s", store, archive_compacted=True)
    await asked.add_items(said("b"))
    await compactor(asked).run_compaction({"force": True})
    assert await archived(store, "b") == [(1, "b", True)]
    with pytest.raises(ValidationError, match=r"'s'.*archive_compacted"):
        HelixSession("s", store, archive_compacted=cast(Any, "yes"))


async def test_OAI_2_a_superseded_run_compacts_nothing(store: SessionStateStore) -> None:
    old = HelixRun(store, "s", strategy="hybrid")
    await old.__aenter__()
    await old.session.add_items(said("a", "b", "c"))
    snapshot = await old.session._get_compaction_snapshot(2)
    assert snapshot is not None
    async with HelixRun(store, "s") as new:
        with pytest.raises(RunSupersededError):
            await compactor(old.session).run_compaction({"force": True})
        with pytest.raises(RunSupersededError):
            await snapshot.replace_suffix(0, cast(Any, [SUMMARY]))
        await old.__aexit__(None, None, None)
        assert await new.session.get_items() == said("a", "b", "c")
    assert await archived(store, "a|b|c") == [(2, "c", False), (1, "b", False), (0, "a", False)]
