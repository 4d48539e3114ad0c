"""``export`` and ``import`` through the installed command, between every backend."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helix_agents.core import ChatMessage, Checkpoint, MessageCommit, open_store

from .conftest import Helix
from .seed import T0, seed

pytestmark = pytest.mark.anyio
SCOPE = ("--user", "alice", "--user", "bob", "orphan")
# What a store sets itself when the import writes: everything else must survive.
VOLATILE = {"created_at", "last_activity_at"}


def _export(
    helix: Helix, url: str, path: Path, scope: tuple[str, ...] = SCOPE
) -> list[dict[str, Any]]:
    done = helix("export", url, *scope)
    assert done.code == 0, done.err
    path.write_text(done.out, "utf-8")
    return [json.loads(line) for line in done.out.splitlines()]


def _content(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each session's records, without what only the writing store decides."""
    by_session: dict[str, list[dict[str, Any]]] = {}
    for record in records[1:-1]:
        if record["type"] == "session":
            record = {k: v for k, v in record.items() if k not in VOLATILE}
            if record["run"] is not None:
                record["run"] = {k: record["run"][k] for k in ("run_id", "status")}
        by_session.setdefault(record["session"], []).append(record)
    return by_session


async def test_round_trip_sqlite_postgres_redis_sqlite_keeps_every_record(
    helix: Helix, sqlite_url: str, pg_url: str, redis_url: str, tmp_path: Path
) -> None:
    await seed(sqlite_url)
    back = f"sqlite:///{tmp_path / 'back.db'}"
    assert helix("migrate", pg_url).code == 0
    hops = [sqlite_url, pg_url, redis_url, back]
    exports = [_export(helix, sqlite_url, tmp_path / "0.jsonl")]
    for number, target in enumerate(hops[1:], 1):
        done = helix("import", target, str(tmp_path / f"{number - 1}.jsonl"), "--json")
        assert done.code == 0, done.err
        assert json.loads(done.out)["created"] == 4
        exports.append(_export(helix, target, tmp_path / f"{number}.jsonl"))
    first = _content(exports[0])
    assert sum(len(v) for v in first.values()) == 4 + 13 + 1 + 1 + 1 + 1
    for hop, records in zip(hops[1:], exports[1:], strict=True):
        assert _content(records) == first, f"{hop} lost or changed a record"
    assert exports[-1][-1] == exports[0][-1]  # the end record's counts


async def test_importing_twice_changes_nothing(
    helix: Helix, seeded: str, pg_url: str, tmp_path: Path
) -> None:
    file = tmp_path / "all.jsonl"
    _export(helix, seeded, file)
    assert helix("migrate", pg_url).code == 0
    assert helix("import", pg_url, str(file)).code == 0
    once = _export(helix, pg_url, tmp_path / "once.jsonl")
    again = helix("import", pg_url, str(file), "--json")
    assert again.code == 0, again.err
    tally = json.loads(again.out)
    assert tally["sessions"] == 4 and tally["created"] == 0
    assert sum(v for k, v in tally.items() if k not in ("sessions", "created")) == 0
    twice = _export(helix, pg_url, tmp_path / "twice.jsonl")
    assert once[1:] == twice[1:]  # timestamps included: nothing was written


async def test_a_session_that_differs_in_the_target_is_a_conflict(
    helix: Helix, sqlite_url: str, tmp_path: Path
) -> None:
    await seed(sqlite_url)
    file = tmp_path / "quiet.jsonl"
    assert helix("export", sqlite_url, "quiet").code == 0
    file.write_text(helix("export", sqlite_url, "quiet").out, "utf-8")
    other = f"sqlite:///{tmp_path / 'other.db'}"
    assert helix("migrate", other).code == 0
    lines = file.read_text("utf-8").splitlines()
    lines[2] = lines[2].replace('"hi"', '"hello"')
    changed = tmp_path / "changed.jsonl"
    changed.write_text("\n".join(lines) + "\n", "utf-8")
    assert helix("import", other, str(changed)).code == 0
    clash = helix("import", other, str(file))
    assert clash.code == 6 and "'quiet'" in clash.err and "rows differ" in clash.err


async def test_a_file_cut_short_is_refused_before_writing(
    helix: Helix, sqlite_url: str, tmp_path: Path
) -> None:
    await seed(sqlite_url)
    full = helix("export", sqlite_url, "chat").out.splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(full[:-1]) + "\n", "utf-8")
    target = f"sqlite:///{tmp_path / 't.db'}"
    assert helix("migrate", target).code == 0
    done = helix("import", target, str(cut))
    assert done.code == 2 and "cut short" in done.err
    assert helix("show", target, "chat").code == 3
    missing = helix("export", sqlite_url, "chat", "nope")
    assert missing.code == 3 and missing.out == ""
    assert helix("export", sqlite_url).code == 2


async def test_rows_retention_dropped_shift_indexes_and_checkpoints(
    helix: Helix, redis_url: str, tmp_path: Path
) -> None:
    source = f"{redis_url}&max_messages=3"
    async with open_store(source) as store:
        await store.create_session("kept", user_id="u")
        for i in range(7):
            await store.append_messages(
                "kept", MessageCommit(messages=(ChatMessage(role="user", content=f"m{i}"),))
            )
        cp = Checkpoint(checkpoint_id="cp", run_id="r", message_count=6, state=None, created_at=T0)
        await store.save_checkpoint("kept", cp)
    records = _export(helix, source, tmp_path / "kept.jsonl", ("kept",))
    session = records[1]
    assert session["message_count"] == 7 and session["first_index"] == 4
    assert [r["index"] for r in records if r["type"] == "row"] == [4, 5, 6]
    shown = json.loads(helix("show", source, "kept", "--first", "2", "--json").out)
    assert [m["index"] for m in shown["messages"]] == [4, 5]
    target = f"sqlite:///{tmp_path / 'kept.db'}"
    assert helix("import", target, str(tmp_path / "kept.jsonl")).code == 0
    async with open_store(target) as store:
        rows = await store.get_messages("kept")
        assert [r.content for r in rows if isinstance(r, ChatMessage)] == ["m4", "m5", "m6"]
        moved = await store.get_checkpoint("kept", "cp")
        assert moved is not None and moved.message_count == 2
