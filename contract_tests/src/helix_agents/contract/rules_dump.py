"""DMP-1..DMP-3: the engine's export reads, and a session restored through the engine
(docs/export.md, docs/backends/writing.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from helix_agents.core import (
    ChatMessage,
    ContextMessage,
    ScopedStateDelta,
    SessionExistsError,
    SessionStateStore,
)
from helix_agents.core.context import Compaction
from helix_agents.core.messages import dump_message
from helix_agents.core.transfer import SessionBlock, export_lines, import_lines, read_export

from ._base import rule
from ._helpers import (
    approval,
    assistant,
    checkpoint,
    commit,
    item,
    item_deliveries,
    late,
    late_deliveries,
    notice,
    start,
    user,
)
from .rules_context import ctx
from .rules_engine import _based

_TEXT = "first line\nsecond line\n" + "x" * 3000


async def _everything(store: SessionStateStore, sid: str = "full") -> str:
    """A session holding a record of every kind; the id of its stored output."""
    await store.create_session(sid, user_id="dmp-user", metadata={"m": [1, {"n": None}]})
    for key in ("i1", "i2"):
        await store.record_context_item(sid, item(key))
    for call_id in ("l1", "l2"):
        await store.record_late_answer(sid, late(call_id))
    await store.append_messages(
        sid,
        commit(
            user("a"),
            notice("delivers i1"),
            assistant("b"),
            notice("delivers l1"),
            user("c"),
            assistant("d"),
            start_run=start("r1"),
            commit_id="k1",
            deliver_context_items=item_deliveries([("i1", 1)]),
            deliver_late_answers=late_deliveries([("l1", 3)]),
            scoped_state=(
                ScopedStateDelta(scope="app", owner="dmp-app", changes={"a": 1}),
                ScopedStateDelta(scope="user", owner="dmp-user", changes={"u": [True]}),
                ScopedStateDelta(scope="session", changes={"s": "v"}),
            ),
        ),
    )
    ref = await ctx(store).store_output(sid, _TEXT, tool_name="grep", key="out-key")
    await ctx(store).record_compaction(sid, Compaction(boundary=4, summary="so far"))
    await store.add_pending_approvals(sid, [approval("ap1"), approval("ap2", 1)])
    await store.resolve_approval(sid, "ap1")
    await store.save_checkpoint(sid, checkpoint("cp1", 6))
    await store.finish_run(sid, "r1", "completed")
    await store.append_messages(sid, commit(user("e"), start_run=start("r2"), commit_id="k2"))
    return ref.output_id


async def _file(store: SessionStateStore, ids: list[str]) -> list[str]:
    return [line async for line in export_lines(store, ids, whole_store=True)]


def _blocks(lines: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Each session's block, as the records of the file."""
    found: dict[str, list[dict[str, Any]]] = {}
    for line in lines[1:-1]:
        record = json.loads(line)
        if "session" in record:
            found.setdefault(record["session"], []).append(record)
    return found


class DumpRules:
    """DMP-1..DMP-3."""

    @rule("DMP-1", requires="engine")
    async def test_DMP_1_a_dump_holds_every_record_of_the_session(
        self, store: SessionStateStore
    ) -> None:
        output_id = await _everything(store)
        engine = _based(store).engine
        assert await engine.dump("nope") is None
        entries = list(read_export(await _file(store, ["full"]), "f"))
        (block,) = [e for e in entries if isinstance(e, SessionBlock)]
        dump = block.dump
        snap = dump.snapshot
        info = await store.get_session("full")
        assert info is not None
        assert (snap.user_id, snap.metadata, snap.created_at, snap.last_activity_at) == (
            info.user_id,
            info.metadata,
            info.created_at,
            info.last_activity_at,
        )
        assert snap.current_run == info.current_run and sorted(dump.run_ids) == ["r1", "r2"]
        rows = [m for m in snap.rows if isinstance(m, ChatMessage | ContextMessage)]
        assert len(rows) == len(snap.rows)  # a file's rows are parsed
        assert [dump_message(m) for m in rows] == [
            dump_message(m) for m in await store.get_messages("full")
        ]
        assert snap.ui_count == await store.get_ui_message_count("full") == 5
        assert sorted((i.key, at) for i, at in dump.context_items) == [("i1", 1), ("i2", None)]
        assert sorted((a.call_id, at) for a, at in dump.late_answers) == [("l1", 3), ("l2", None)]
        assert [a.approval_id for a in snap.pending] == ["ap2"] and list(dump.resolved) == ["ap1"]
        assert [cp.checkpoint_id for cp in snap.checkpoints] == ["cp1"]
        assert sorted((c, r.first_index, r.message_count) for c, r in dump.commits) == [
            ("k1", 0, 6),
            ("k2", 6, 7),
        ]
        ((ref, text),) = dump.outputs
        assert (ref.output_id, ref.key, text) == (output_id, "out-key", _TEXT)
        assert [boundary for boundary, _ in dump.compactions] == [4] and snap.preserved
        assert dict(snap.session_scoped) == {"s": "v"}
        await store.delete_session("full")
        assert await engine.dump("full") is None

    @rule("DMP-2", requires="engine")
    async def test_DMP_2_scoped_maps_lists_every_app_and_user_map_once(
        self, store: SessionStateStore
    ) -> None:
        engine = _based(store).engine
        assert list(await engine.scoped_maps()) == []
        await _everything(store)
        await store.create_session("other")
        await store.append_messages(
            "other",
            commit(
                user(),
                scoped_state=(
                    ScopedStateDelta(scope="app", owner="dmp-app", changes={"b": 2}),
                    ScopedStateDelta(scope="user", owner="u{2}%", changes={"x": None}),
                ),
            ),
        )
        maps = sorted(await engine.scoped_maps())
        assert maps == [
            ("app", "dmp-app", {"a": 1, "b": 2}),
            ("user", "dmp-user", {"u": [True]}),
            ("user", "u{2}%", {"x": None}),
        ]
        for scope, owner, values in maps:
            assert await store.get_scoped_state(scope, owner) == values  # type: ignore[arg-type]

    @rule("DMP-3", requires="engine")
    async def test_DMP_3_a_session_restored_through_the_engine_reads_back_equal(
        self, store: SessionStateStore
    ) -> None:
        output_id = await _everything(store)
        await store.create_session("plain")
        await store.append_messages("plain", commit(*(user(f"p{n}") for n in range(6))))
        lines = await _file(store, ["full", "plain"])
        records = _blocks(lines)
        for sid in ("full", "plain"):
            await store.delete_session(sid)
        report = await import_lines(store, lambda: iter(lines), "f")
        assert sorted(report.written) == ["full", "plain"]
        assert _blocks(await _file(store, ["full", "plain"])) == records
        text = await ctx(store).read_output("full", output_id, end_line=1)
        assert [line.text for line in text.lines] == ["first line"]
        again = await import_lines(store, lambda: iter(lines), "f")
        assert sorted(again.present) == ["full", "plain"] and not again.written
        await store.delete_session("plain")
        await store.create_session("plain")
        with pytest.raises(SessionExistsError) as refused:
            await import_lines(store, lambda: iter(lines), "f")
        assert refused.value.session_id == "plain"
        assert await store.get_message_count("plain") == 0
