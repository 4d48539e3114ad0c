"""``export`` and ``import`` through the installed command, between every backend."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from pydantic import JsonValue

from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    ContextItem,
    JsonObject,
    LateAnswer,
    MessageCommit,
    PendingApproval,
    StartRun,
    StoredContextItem,
    open_store,
)

from .conftest import Helix
from .seed import T0, seed

pytestmark = pytest.mark.anyio
SCOPE = ("--user", "alice", "--user", "bob", "orphan")


def _export(
    helix: Helix, url: str, path: Path, scope: tuple[str, ...] = SCOPE
) -> list[dict[str, Any]]:
    done = helix("export", url, *scope)
    assert done.code == 0, done.err
    path.write_text(done.out, "utf-8")
    return [json.loads(line) for line in done.out.splitlines()]


def _content(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each session's records (times included: an import keeps them, EXP-4)."""
    by_session: dict[str, list[dict[str, Any]]] = {}
    for record in records[1:-1]:
        if record["type"] != "scoped":
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
        assert json.loads(done.out)["written"] == 4
        exports.append(_export(helix, target, tmp_path / f"{number}.jsonl"))
    first = _content(exports[0])
    # 4 sessions; 13 rows; of chat: 1 checkpoint, 1 approval, 2 context items (one
    # delivered), 1 late answer.
    assert sum(len(v) for v in first.values()) == 4 + 13 + 1 + 1 + 2 + 1
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
    assert tally == {"sessions": 4, "written": 0, "resumed": 0, "present": 4, "maps": 0}
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
    assert clash.code == 6 and "'quiet'" in clash.err and "state_session_exists" in clash.err
    async with open_store(other) as store:
        (row,) = await store.get_messages("quiet")
        assert isinstance(row, ChatMessage) and row.content == "hello"  # left as it was


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
    whole = helix("export", sqlite_url)  # no scope: every session of the store
    assert whole.code == 0 and json.loads(whole.out.splitlines()[-1])["sessions"] == 4


async def test_rows_retention_dropped_keep_their_indexes_and_checkpoints(
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
        assert await store.get_message_count("kept") == 7
        assert await store.get_ui_message_count("kept") == 7
        page = await store.page_messages("kept", limit=1)
        assert page.messages[0].content == "m4"
        moved = await store.get_checkpoint("kept", "cp")
        assert moved == cp


# Every character class JSON Lines, URLs and the backends' encodings could trip over.
ODD = "a\u2028b\u2029c\x00d\x1f\u202eé😀\\\"'<>&\r\n\t"


async def _hostile(url: str) -> str:
    """A session whose ids, text, numbers and times are as awkward as the store accepts."""
    sid = "h" + ODD.replace("\x00", "")
    floats: list[JsonValue] = [0.1, 1e308, -0.0, 1e-300, 5e-324, 1.0, 2.5]
    metadata: JsonObject = {
        "t": ODD,
        "f": floats,
        "i": [2**53 + 1, -(2**62)],
        "n": {"": {"a.b": None}},
    }
    offset = timezone(timedelta(hours=5, minutes=30))
    async with open_store(url) as store:
        await store.create_session(sid, user_id="u\u2028", metadata=metadata)
        call = {"id": "c1", "type": "function", "function": {"name": "s", "arguments": ODD}}
        await store.append_messages(
            sid,
            MessageCommit(
                start_run=StartRun(run_id="r\u2028"),
                messages=(
                    ChatMessage(role="user", content=ODD, name="n\u2028", x={"d": [[-0.0, 1.0]]}),
                    ChatMessage(role="assistant", content=None, tool_calls=[call]),
                    ChatMessage(role="tool", content=ODD, tool_call_id="c1"),
                    ContextItem(kind="memory", content=ODD, memory_ids=["m\u2028"]).to_message(),
                    ChatMessage(role="system", content=""),
                ),
            ),
        )
        state = {"s": ODD, "f": -0.0, "g": 1.0, "big": 2**63 - 1}
        at = datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=offset)
        await store.save_checkpoint(
            sid,
            Checkpoint(
                checkpoint_id="cp\u2028",
                run_id="r\u2028",
                message_count=3,
                state=state,
                created_at=at,
            ),
        )
        approval = PendingApproval(
            approval_id="a\u2028",
            tool_name="t",
            tool_call_id="c\u2028",
            input={"x": ODD},
            requested_at=at,
        )
        await store.add_pending_approvals(sid, [approval])
        note = StoredContextItem(key="k\u2028", item=ContextItem(kind="notice", content=ODD), at=at)
        await store.record_context_item(sid, note)
        late = LateAnswer(call_id="l\u2028", tool_name="w", output=[ODD, 1.0, -0.0], at=at)
        await store.record_late_answer(sid, late)
        await store.finish_run(sid, "r\u2028", "failed")
    return sid


async def test_a_hostile_session_comes_back_equal_across_every_backend(
    helix: Helix, sqlite_url: str, pg_url: str, redis_url: str, tmp_path: Path
) -> None:
    sid = await _hostile(sqlite_url)
    assert helix("migrate", pg_url).code == 0
    hops = [sqlite_url, pg_url, redis_url, f"sqlite:///{tmp_path / 'back.db'}"]
    exports = [_export(helix, sqlite_url, tmp_path / "0.jsonl", (sid,))]
    for number, target in enumerate(hops[1:], 1):
        done = helix("import", target, str(tmp_path / f"{number - 1}.jsonl"))
        assert done.code == 0, done.err
        exports.append(_export(helix, target, tmp_path / f"{number}.jsonl", (sid,)))
    first = _content(exports[0])
    assert len(first[sid]) == 1 + 5 + 4
    for hop, records in zip(hops[1:], exports[1:], strict=True):
        assert _content(records) == first, f"{hop} changed the hostile session"


def _file(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


async def _sessions_in(url: str, ids: list[str]) -> list[str]:
    async with open_store(url) as store:
        return [sid for sid in ids if await store.get_session(sid) is not None]


async def test_a_file_the_store_refuses_further_down_writes_nothing(
    helix: Helix, seeded: str, tmp_path: Path
) -> None:
    lines = helix("export", seeded, "--user", "alice", "orphan").out.splitlines()
    # The last session's block: an id longer than a store accepts (it parses; the store refuses).
    at = max(i for i, line in enumerate(lines) if '"type":"session"' in line)
    last = json.loads(lines[at])["session"]
    long = "o" * 600
    lines[at:-1] = [
        line.replace(f'"session":"{last}"', f'"session":"{long}"') for line in lines[at:-1]
    ]
    target = f"sqlite:///{tmp_path / 't.db'}"
    assert helix("migrate", target).code == 0
    done = helix("import", target, str(_file(tmp_path, "bad.jsonl", lines)))
    assert done.code == 2, done.err
    assert "nothing was written" in done.err and "validation_error" in done.err
    assert await _sessions_in(target, ["chat", "quiet", "orphan"]) == []


async def test_a_second_block_of_one_session_is_refused_before_writing(
    helix: Helix, seeded: str, tmp_path: Path
) -> None:
    lines = helix("export", seeded, "quiet", "orphan").out.splitlines()
    quiet = [line for line in lines if '"session":"quiet"' in line]
    end = json.loads(lines[-1])
    end["sessions"] += 1
    end["records"] += len(quiet) - 1
    doubled = [*lines[:-1], *quiet, json.dumps(end)]
    target = f"sqlite:///{tmp_path / 't.db'}"
    done = helix("import", target, str(_file(tmp_path, "twice.jsonl", doubled)))
    assert done.code == 2 and "second block of session 'quiet'" in done.err
    assert await _sessions_in(target, ["quiet", "orphan"]) == []


async def test_a_raw_line_separator_inside_a_string_is_one_line(
    helix: Helix, sqlite_url: str, tmp_path: Path
) -> None:
    await seed(sqlite_url)
    lines = helix("export", sqlite_url, "quiet").out.splitlines()
    # What another JSON Lines writer may leave raw: U+2028 and U+2029 split no line.
    lines[2] = lines[2].replace('"hi"', '"h\u2028i\u2029"')
    target = f"sqlite:///{tmp_path / 't.db'}"
    done = helix("import", target, str(_file(tmp_path, "raw.jsonl", lines)))
    assert done.code == 0, done.err
    async with open_store(target) as store:
        (row,) = await store.get_messages("quiet")
        assert isinstance(row, ChatMessage) and row.content == "h\u2028i\u2029"


@pytest.mark.parametrize(
    ("case", "code"),
    [("missing file", 2), ("not UTF-8", 2), ("not JSON", 2), ("too deep", 2), ("no server", 4)],
)
async def test_import_exit_codes_per_error_class(
    helix: Helix, sqlite_url: str, tmp_path: Path, case: str, code: int
) -> None:
    await seed(sqlite_url)
    good = helix("export", sqlite_url, "quiet").out.splitlines()
    target = f"sqlite:///{tmp_path / 't.db'}"
    path = tmp_path / "f.jsonl"
    if case == "not UTF-8":
        path.write_bytes("\n".join(good).encode() + b"\n\xff\xfe\n")
    elif case == "not JSON":
        _file(tmp_path, "f.jsonl", [*good[:2], "{nope", *good[2:]])
    elif case == "too deep":
        _file(tmp_path, "f.jsonl", [*good[:2], "[" * 100_000 + "]" * 100_000, *good[2:]])
    elif case == "no server":
        _file(tmp_path, "f.jsonl", good)
        target = "redis://127.0.0.1:1/0"
    done = helix("import", target, str(path))
    assert done.code == code, done.err
    assert done.err.startswith("helix-store: error: ") and done.err.count("\n") == 1
    if target.startswith("sqlite"):
        assert await _sessions_in(target, ["quiet"]) == []
