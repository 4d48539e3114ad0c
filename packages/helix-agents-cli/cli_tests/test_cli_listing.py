"""``sessions`` and ``show`` through the installed command, on every backend."""

from __future__ import annotations

import json

import pytest

from .conftest import Helix

pytestmark = pytest.mark.anyio


async def test_sessions_lists_a_users_sessions_in_pages(helix: Helix, seeded: str) -> None:
    first = helix("sessions", seeded, "--user", "alice", "--first", "1", "--json")
    assert first.code == 0, first.err
    page = json.loads(first.out)
    assert len(page["sessions"]) == 1 and page["next_cursor"]
    second = helix(
        "sessions",
        seeded,
        "--user",
        "alice",
        "--first",
        "1",
        "--cursor",
        page["next_cursor"],
        "--json",
    )
    rest = json.loads(second.out)
    ids = {page["sessions"][0]["id"], rest["sessions"][0]["id"]}
    assert ids == {"chat", "quiet"} and rest["next_cursor"] is None
    table = helix("sessions", seeded, "--user", "alice")
    assert table.code == 0
    assert "chat" in table.out and "quiet" in table.out and "other" not in table.out


async def test_show_marks_context_rows_and_pages(helix: Helix, seeded: str) -> None:
    shown = helix("show", seeded, "chat", "--json")
    assert shown.code == 0, shown.err
    data = json.loads(shown.out)
    assert data["session"]["user_id"] == "alice"
    assert data["session"]["metadata"] == {"title": "Trip", "n": 1}
    assert [m["context"] for m in data["messages"]] == [False, True, False, False, False]
    assert [m["index"] for m in data["messages"]] == [0, 1, 2, 3, 4]
    assert data["messages"][1]["row"]["content"] == "likes trains"
    table = helix("show", seeded, "chat")
    assert "context:memory" in table.out and "Take the 9:04 TGV. ☃" in table.out
    newest = json.loads(
        helix("show", seeded, "orphan", "--first", "3", "--order", "desc", "--json").out
    )
    assert [m["row"]["content"] for m in newest["messages"]] == ["m6", "m5", "m4"]
    assert [m["index"] for m in newest["messages"]] == [6, 5, 4]
    after = helix(
        "show",
        seeded,
        "orphan",
        "--first",
        "3",
        "--order",
        "desc",
        "--json",
        "--cursor",
        newest["next_cursor"],
    )
    assert [m["row"]["content"] for m in json.loads(after.out)["messages"]] == ["m3", "m2", "m1"]
    assert [m["index"] for m in json.loads(after.out)["messages"]] == [3, 2, 1]
    tail = json.loads(helix("show", seeded, "orphan", "--first", "5", "--json").out)
    more = helix(
        "show", seeded, "orphan", "--first", "5", "--json", "--cursor", tail["next_cursor"]
    )
    assert [m["index"] for m in json.loads(more.out)["messages"]] == [5, 6]
    assert [m["row"]["content"] for m in json.loads(more.out)["messages"]] == ["m5", "m6"]


async def test_errors_are_one_line_with_exit_codes(helix: Helix, seeded: str) -> None:
    missing = helix("show", seeded, "nope")
    assert missing.code == 3 and missing.out == ""
    assert missing.err.count("\n") == 1 and "'nope'" in missing.err
    bad = helix("show", seeded, "chat", "--cursor", "garbage")
    assert bad.code == 2 and "Traceback" not in bad.err and "malformed" in bad.err
    debug = helix("--debug", "show", seeded, "chat", "--cursor", "garbage")
    assert debug.code == 2 and "Traceback" in debug.err


def test_a_password_never_shows(helix: Helix) -> None:
    down = helix("sessions", "postgresql://me:hunter2@127.0.0.1:1/db", "--user", "a")
    assert down.code == 4
    assert "hunter2" not in down.err + down.out and "***" in down.err
    assert down.err.count("\n") == 1
    debug = helix("--debug", "sessions", "postgresql://me:hunter2@127.0.0.1:1/db", "--user", "a")
    assert debug.code == 4 and "Traceback" in debug.err and "hunter2" not in debug.err


async def test_sessions_without_a_user_lists_the_whole_store_with_owners(
    helix: Helix, seeded: str
) -> None:
    listed = helix("sessions", seeded, "--json")
    assert listed.code == 0, listed.err
    page = json.loads(listed.out)
    assert {s["id"]: s["user_id"] for s in page["sessions"]} == {
        "chat": "alice",
        "quiet": "alice",
        "other": "bob",
        "orphan": None,
    }
    table = helix("sessions", seeded)
    assert "orphan" in table.out and "bob" in table.out


async def test_an_empty_user_listing_names_the_compound_owners_that_hold_the_user(
    helix: Helix, seeded: str
) -> None:
    from helix_agents.core import open_store

    async with open_store(seeded) as store:
        await store.create_session('["travel","ada"]', user_id='["travel","ada"]')
    shown = helix("sessions", seeded, "--user", "ada")
    assert shown.code == 0, shown.err
    assert """owners that name it: '["travel","ada"]'""" in shown.err
    nobody = helix("sessions", seeded, "--user", "nobody")
    assert "without --user lists every session" in nobody.err
    assert "owners that name it" not in nobody.err
