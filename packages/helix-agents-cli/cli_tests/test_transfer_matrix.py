"""EXP-13: the corpus moved across every ordered pair of the four backends, through the
public API, then read back whole and continued (docs/export.md)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from helix_agents.contract.rules_context import ctx
from helix_agents.core import (
    ChatMessage,
    MessageCommit,
    PendingApproval,
    SessionStateStore,
    StoredContextItem,
    open_store,
)
from helix_agents.core.messages import dump_message
from helix_agents.core.transfer import export_lines, import_lines

from .conftest import Fresh
from .corpus import LONG_OUTPUT, build_corpus
from .corpus_adk import adk_next_turn, adk_view
from .corpus_graphs import graph_next_turn, graph_view
from .seed import T0

pytestmark = pytest.mark.anyio

BACKENDS = ("memory", "sqlite", "postgres", "redis")
CORE_IDS = ["chat", "ctx", "orphan", "other", "quiet", "replaced"]


def _options(url: str) -> dict[str, Any]:
    return {"auto_migrate": True} if url.startswith("postgres") else {}


async def _ids(store: SessionStateStore) -> list[str]:
    return [s.id for s in (await store.list_all_sessions(first=500)).sessions]


async def _view(store: SessionStateStore, output_id: str) -> dict[str, Any]:
    """Everything the protocol reads of the corpus (not through the export)."""
    seen: dict[str, Any] = {}
    for sid in await _ids(store):
        info = await store.get_session(sid)
        assert info is not None, sid
        window = await ctx(store).get_window(sid)
        seen[sid] = {
            "info": info.model_dump(mode="json"),
            "ui": await store.get_ui_message_count(sid),
            "rows": [dump_message(m) for m in await store.get_messages(sid)],
            "pending": await store.list_pending_approvals(sid),
            "items": await store.list_undelivered_context_items(sid),
            "late": await store.list_undelivered_late_answers(sid),
            "checkpoints": await store.list_checkpoints(sid),
            "window": window.model_dump(mode="json"),
            "scoped": await store.get_scoped_state("session", sid),
            "truncated": await store.is_truncated(sid),
            "history": (await ctx(store).search_history(sid, grep=".", limit=200)).model_dump(),
            "redactions": await store.list_redactions(sid),
        }
    for owner in ("alice", "bob"):
        listed = await store.list_sessions(owner, first=100)
        seen[f"listed:{owner}"] = [s.model_dump(mode="json") for s in listed.sessions]
    seen["app"] = await store.get_scoped_state("app", "app-travel")
    seen["user"] = await store.get_scoped_state("user", "alice")
    seen["output"] = (await ctx(store).read_output("ctx", output_id, end_line=300)).model_dump()
    seen["adk"] = (await adk_view(store)).model_dump(mode="json")
    seen["graphs"] = await graph_view(store)
    return seen


async def _export(store: SessionStateStore) -> list[str]:
    return [line async for line in export_lines(store, await _ids(store), whole_store=True)]


async def _next_turn(store: SessionStateStore, built: dict[str, Any]) -> None:
    """What the corpus's agents do next works on the target as on the source."""
    last = built["last_commit"]
    replay = await store.append_messages(
        "ctx",
        MessageCommit(
            messages=(ChatMessage(role="user", content="question 4", id="u4"),),
            commit_id="commit-2",
        ),
    )
    assert replay.replayed
    assert (replay.first_index, replay.message_count) == (last.first_index, last.message_count)
    landed = await store.append_messages(
        "ctx",
        MessageCommit(
            messages=(ChatMessage(role="assistant", content="answer 5"),),
            fence_run_id="run-b",
            expect_message_count=last.message_count,
            commit_id="commit-3",
        ),
    )
    assert (landed.first_index, landed.replayed) == (last.message_count, False)
    window = await ctx(store).get_window("ctx")
    assert window.start == 9 and window.summary is not None
    assert window.summary.content == "Then 2 more." and window.preserved
    text = await ctx(store).read_output("ctx", built["output_id"], end_line=2)
    assert [line.text for line in text.lines] == LONG_OUTPUT.split("\n")[:2]
    assert await store.resolve_approval("ctx", "ap-1") == "already-resolved"
    again = PendingApproval(
        approval_id="ap-1", tool_name="book", tool_call_id="x", input=None, requested_at=T0
    )
    await store.add_pending_approvals("ctx", [again])
    assert [a.approval_id for a in await store.list_pending_approvals("ctx")] == ["ap-2"]
    delivered = await store.list_undelivered_context_items("ctx")
    assert [i.key for i in delivered] == ["tip-1"]
    item = StoredContextItem.model_validate(delivered[0].model_dump())
    assert not (await store.record_context_item("ctx", item)).recorded


@pytest.mark.parametrize(
    ("source", "target"),
    list(itertools.product(BACKENDS, BACKENDS)),
    ids=[f"{a}-to-{b}" for a, b in itertools.product(BACKENDS, BACKENDS)],
)
async def test_every_record_moves_between_every_pair_of_backends(
    fresh: Fresh, source: str, target: str
) -> None:
    src, dst = fresh(source), fresh(target)
    built = await build_corpus(src)
    async with (
        open_store(src, **_options(src)) as before,
        open_store(dst, **_options(dst)) as after,
    ):
        lines = await _export(before)
        ids = await _ids(before)
        assert set(CORE_IDS) < set(ids)  # and the ADK, LangGraph and OpenAI sessions
        report = await import_lines(after, lambda: iter(lines), "corpus")
        # app-travel, alice; ADK's app map, its map of users, ann's user map
        assert report.written == ids and report.maps == 5
        assert await _ids(after) == ids
        assert (await _export(after))[1:] == lines[1:]
        assert await _view(after, built["output_id"]) == await _view(before, built["output_id"])
        again = await import_lines(after, lambda: iter(lines), "corpus")
        assert again.present == ids and not again.written and not again.resumed
        await _next_turn(after, built)
        await adk_next_turn(after)
        await graph_next_turn(after)
