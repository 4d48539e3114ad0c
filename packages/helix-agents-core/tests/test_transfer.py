"""The export file's rules that hold whatever the backend (docs/export.md, EXP-1..EXP-12);
every backend and every pair of them: DMP-1..DMP-3 and cli_tests/test_transfer_matrix.py."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

import pytest

from helix_agents.core import (
    ChatMessage,
    ConcurrencyConflictError,
    MessageCommit,
    ScopedStateDelta,
    SessionStateStore,
    StartRun,
    ValidationError,
)
from helix_agents.core.backend import Changes, Engine, NewSession, Refused, Snapshot, Want
from helix_agents.core.errors import StoreMisconfiguredError
from helix_agents.core.transfer import (
    ExportFileError,
    SessionBlock,
    dump_session,
    export_lines,
    import_lines,
    read_export,
)
from helix_agents.core.transfer._restore import first_version_of, plans_of
from helix_agents.store_memory import MemoryData, MemoryStateStore
from helix_agents.store_memory._engine import MemoryEngine

pytestmark = pytest.mark.anyio


async def _source() -> MemoryStateStore:
    store = MemoryStateStore()
    await store.create_session("s1", user_id="u1", metadata={"k": 1})
    await store.append_messages(
        "s1",
        MessageCommit(
            messages=tuple(ChatMessage(role="user", content=f"m{n}") for n in range(3)),
            start_run=StartRun(run_id="r1"),
            commit_id="c1",
            scoped_state=(
                ScopedStateDelta(scope="app", owner="app1", changes={"a": 1}),
                ScopedStateDelta(scope="session", changes={"s": 1}),
            ),
        ),
    )
    await store.store_output("s1", "one\ntwo\n", key="o1")
    await store.create_session("s2")
    return store


async def _lines(store: SessionStateStore, ids: tuple[str, ...] = ("s1", "s2")) -> list[str]:
    return [line async for line in export_lines(store, ids, whole_store=True)]


async def _ids(store: SessionStateStore) -> list[str]:
    return [s.id for s in (await store.list_all_sessions(first=500)).sessions]


async def test_EXP_1_a_file_of_another_version_is_refused_at_its_header() -> None:
    lines = await _lines(await _source())
    header = json.loads(lines[0])
    assert (header["type"], header["version"]) == ("helix-store-export", 2)
    old = [json.dumps({**header, "version": 1}), *lines[1:]]
    with pytest.raises(ExportFileError) as refused:
        list(read_export(old, "old.jsonl"))
    assert (refused.value.line, refused.value.field) == (1, "version")
    assert refused.value.code == "validation_error"


async def test_EXP_2_an_engine_without_dump_refuses_before_the_first_line() -> None:
    class NoDump(MemoryEngine):
        dump = Engine.dump

    store = MemoryStateStore()
    store.engine = NoDump(store.data)
    await store.create_session("s1")
    lines = export_lines(store, ["s1"], whole_store=True)
    with pytest.raises(StoreMisconfiguredError):
        await lines.__anext__()


async def test_EXP_2_dump_session_reads_one_sessions_records_as_data() -> None:
    store = await _source()
    dump = await dump_session(store, "s1")
    assert dump is not None
    assert len(dump.snapshot.rows) == 3 and list(dump.run_ids) == ["r1"]
    assert [(ref.key, text) for ref, text in dump.outputs] == [("o1", "one\ntwo\n")]
    assert await dump_session(store, "gone") is None
    with pytest.raises(ValidationError):  # a store not built on StoreBase: no engine
        await dump_session(object(), "s1")  # type: ignore[arg-type]


async def test_EXP_3_maps_are_written_once_and_merged_key_by_key() -> None:
    source = await _source()
    await source.create_session("s3")
    await source.append_messages(
        "s3",
        MessageCommit(
            messages=(ChatMessage(role="user", content="x"),),
            scoped_state=(ScopedStateDelta(scope="app", owner="app1", changes={"b": 2}),),
        ),
    )
    lines = await _lines(source, ("s1", "s2", "s3"))
    maps = [json.loads(line) for line in lines if '"type":"scoped"' in line]
    assert maps == [{"type": "scoped", "scope": "app", "owner": "app1", "values": {"a": 1, "b": 2}}]
    target = MemoryStateStore()
    await target.create_session("t")
    await target.append_messages(
        "t",
        MessageCommit(
            messages=(ChatMessage(role="user", content="x"),),
            scoped_state=(ScopedStateDelta(scope="app", owner="app1", changes={"a": 0, "c": 3}),),
        ),
    )
    report = await import_lines(target, lambda: iter(lines), "f")
    assert report.maps == 1
    assert await target.get_scoped_state("app", "app1") == {"a": 1, "b": 2, "c": 3}
    assert await _ids(target) == ["s1", "s2", "s3", "t"]  # the map's own session is gone


class _MapsReadOnlyError(Exception):
    pass


class _MapsRefused(MemoryEngine):
    """An engine whose app and user maps refuse every write."""

    def _merge_shared(self, key: tuple[str, str], values: Mapping[str, Any]) -> None:
        raise _MapsReadOnlyError


async def test_EXP_3_the_session_of_a_map_write_is_removed_when_the_write_fails() -> None:
    lines = await _lines(await _source())
    data = MemoryData()
    target = MemoryStateStore(data)
    target.engine = _MapsRefused(data)
    with pytest.raises(_MapsReadOnlyError):
        await import_lines(target, lambda: iter(lines), "f")
    assert await _ids(target) == ["s1", "s2"]  # no helix-import-<hex> left behind


async def test_EXP_4_ids_times_and_indexes_come_back_as_written() -> None:
    source = await _source()
    lines = await _lines(source)
    target = MemoryStateStore()
    await import_lines(target, lambda: iter(lines), "f")
    assert (await _lines(target))[1:] == lines[1:]
    before, after = await source.get_session("s1"), await target.get_session("s1")
    assert before == after


async def test_EXP_5_export_writes_its_header_before_reading_a_session() -> None:
    source = await _source()
    asked: list[str] = []

    def ids() -> Iterator[str]:
        for sid in ("s1", "s2"):
            asked.append(sid)
            yield sid

    lines = export_lines(source, ids(), whole_store=True)
    assert json.loads(await lines.__anext__())["type"] == "helix-store-export"
    assert asked == []
    assert json.loads(await lines.__anext__())["session"] == "s1"
    assert asked == ["s1"]


async def test_EXP_6_a_block_is_yielded_before_the_next_one_is_read() -> None:
    lines = await _lines(await _source())
    read: list[int] = []

    def feed() -> Iterator[str]:
        for number, line in enumerate(lines, 1):
            read.append(number)
            yield line

    entries = read_export(feed(), "f")
    first = next(entries)
    assert isinstance(first, SessionBlock) and first.dump.snapshot.session_id == "s1"
    second_session = next(n for n, line in enumerate(lines, 1) if '"session":"s2"' in line)
    assert read[-1] == second_session  # s2's first line ended s1's block; no line beyond


def _edit(lines: list[str], find: str, change: Any) -> list[str]:
    """``lines`` with the first record containing ``find`` changed by ``change(record)``."""
    at = next(i for i, line in enumerate(lines) if find in line)
    record = json.loads(lines[at])
    change(record)
    return [*lines[:at], json.dumps(record), *lines[at + 1 :]]


_CASES: dict[str, tuple[Any, int | None, str | None]] = {
    "not JSON": (lambda ls: [*ls[:2], "{nope", *ls[2:]], 3, None),
    "NaN": (lambda ls: [*ls[:2], '{"type": "row", "x": NaN}', *ls[2:]], 3, None),
    "missing field": (
        lambda ls: _edit(ls, '"type":"session"', lambda r: r.pop("ui_count")),
        2,
        "ui_count",
    ),
    "bad id": (
        lambda ls: _edit(ls, '"type":"commit"', lambda r: r.update(commit_id="")),
        None,
        "commit_id",
    ),
    "row out of sequence": (
        lambda ls: _edit(ls, '"type":"row"', lambda r: r.update(index=5)),
        3,
        "index",
    ),
    "index past the rows": (
        lambda ls: _edit(ls, '"type":"commit"', lambda r: r.update(message_count=99)),
        2,
        "commit.message_count",
    ),
    "current run not among run ids": (
        lambda ls: _edit(ls, '"session":"s1","user_id"', lambda r: r.update(run_ids=[])),
        2,
        "run_ids",
    ),
    "end counts": (
        lambda ls: _edit(ls, '"type":"end"', lambda r: r.update(records=0)),
        None,
        "records",
    ),
    "cut short": (lambda ls: ls[:-1], 0, None),
    "unknown type": (
        lambda ls: _edit(ls, '"type":"row"', lambda r: r.update(type="rowz")),
        3,
        "type",
    ),
}


@pytest.mark.parametrize("case", list(_CASES))
async def test_EXP_7_a_file_that_cannot_be_carried_is_refused_naming_line_and_field(
    case: str,
) -> None:
    lines = await _lines(await _source())
    change, line, field = _CASES[case]
    bad = change(lines)
    target = MemoryStateStore()
    with pytest.raises(ExportFileError) as refused:
        await import_lines(target, lambda: iter(bad), "bad.jsonl")
    if line is not None:
        assert refused.value.line == line
    assert refused.value.field == field
    assert refused.value.code == "validation_error"
    assert await _ids(target) == []  # nothing written


async def test_EXP_9_an_interrupted_import_resumes_where_it_stopped() -> None:
    lines = await _lines(await _source())
    (block, *_) = [e for e in read_export(lines, "f") if isinstance(e, SessionBlock)]
    target = MemoryStateStore()
    # What an import stopped after two of the session's writes leaves behind.
    plans = plans_of(block.dump)
    snap = block.dump.snapshot
    first = first_version_of(block.dump)
    engine = target.engine
    await engine.create(
        NewSession("s1", snap.user_id, snap.created_at, dict(snap.metadata), version=first)
    )
    for done, plan in enumerate(plans[:2]):
        assert not isinstance(await engine.apply("s1", first + done, plan(), Want()), Refused)
    report = await import_lines(target, lambda: iter(lines), "f")
    assert (report.resumed, report.written) == (["s1"], ["s2"])
    assert (await _lines(target))[1:] == lines[1:]
    again = await import_lines(target, lambda: iter(lines), "f")
    assert again.present == ["s1", "s2"] and not again.written and not again.resumed


class _Lossy(MemoryEngine):
    """An engine that does not store outputs."""

    async def restore(
        self, new: NewSession, plans: Sequence[Changes]
    ) -> Literal["created", "exists"]:
        return await super().restore(new, [dataclasses.replace(c, output=None) for c in plans])


async def test_EXP_10_a_target_that_does_not_store_a_record_is_refused() -> None:
    lines = await _lines(await _source())
    target = MemoryStateStore()
    target.engine = _Lossy(target.data)
    with pytest.raises(ValidationError) as refused:
        await import_lines(target, lambda: iter(lines), "f")
    assert refused.value.session_id == "s1"


class _Busy(MemoryEngine):
    """An engine that writes a session in steps (core's default ``restore``), on which
    another writer lands between the import's first two writes."""

    restore = Engine.restore
    applied = 0

    async def apply(
        self, session_id: str, version: int, changes: Changes, want: Want
    ) -> Refused | Snapshot:
        self.applied += 1
        if self.applied == 2:
            other = MemoryStateStore(self.data)
            await other.append_messages(
                session_id, MessageCommit(messages=(ChatMessage(role="user", content="!"),))
            )
        return await super().apply(session_id, version, changes, want)


async def test_EXP_12_a_session_written_during_its_import_is_a_conflict() -> None:
    lines = await _lines(await _source())
    data = MemoryData()
    target = MemoryStateStore(data)
    target.engine = _Busy(data)
    with pytest.raises(ConcurrencyConflictError) as refused:
        await import_lines(target, lambda: iter(lines), "f")
    assert refused.value.session_id == "s1"


async def test_EXP_8_a_session_written_without_a_record_of_its_own_keeps_its_activity() -> None:
    source = MemoryStateStore()
    await source.create_session("s1")
    # Its only write goes to an app map (as an ADK session's first state change can).
    delta = ScopedStateDelta(scope="app", owner="app1", changes={"a": 1})
    await source.append_messages("s1", MessageCommit(messages=(), scoped_state=(delta,)))
    info = await source.get_session("s1")
    assert info is not None and info.last_activity_at != info.created_at
    lines = await _lines(source, ("s1",))
    target = MemoryStateStore()
    assert (await import_lines(target, lambda: iter(lines), "f")).written == ["s1"]
    assert (await _lines(target, ("s1",)))[1:] == lines[1:]
