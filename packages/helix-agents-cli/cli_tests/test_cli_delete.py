"""``delete`` through the installed command, on every backend: asked, then done."""

from __future__ import annotations

import json

import pytest

from helix_agents.core import MessageCommit, ScopedStateDelta, open_store

from .conftest import Helix

pytestmark = pytest.mark.anyio


def _exists(helix: Helix, url: str, session: str) -> bool:
    shown = helix("show", url, session, "--json")
    assert shown.code in (0, 3), shown.err
    return shown.code == 0


async def test_delete_asks_and_deletes_by_id_or_user(helix: Helix, seeded: str) -> None:
    declined = helix("delete", seeded, "chat", stdin="n\n")
    assert declined.code == 1 and "chat" in declined.err and "nothing deleted" in declined.err
    no_answer = helix("delete", seeded, "chat")
    assert no_answer.code == 1 and _exists(helix, seeded, "chat")
    # A missing session stops the command before anything is deleted.
    missing = helix("delete", seeded, "nope", "chat", "--yes")
    assert missing.code == 3 and "state_session_not_found" in missing.err
    assert _exists(helix, seeded, "chat")

    by_id = helix("delete", seeded, "orphan", stdin="y\n")
    assert by_id.code == 0 and by_id.out == "deleted orphan\n", by_id.err
    assert not _exists(helix, seeded, "orphan")

    by_user = helix("delete", seeded, "--user", "alice", "--yes", "--json")
    assert by_user.code == 0, by_user.err
    result = json.loads(by_user.out)
    assert sorted(result["deleted"]) == ["chat", "quiet"] and result["already_gone"] == []
    listed = json.loads(helix("sessions", seeded, "--user", "alice", "--json").out)
    assert listed["sessions"] == []
    assert _exists(helix, seeded, "other")
    again = helix("delete", seeded, "--user", "alice", "--yes")
    assert again.code == 0 and again.out == "no sessions to delete\n"


def test_delete_needs_a_scope(helix: Helix, sqlite_url: str) -> None:
    done = helix("delete", sqlite_url, "--yes")
    assert done.code == 2 and "--user" in done.err


async def test_erase_user_asks_then_erases_the_sessions_and_the_user_state(
    helix: Helix, seeded: str
) -> None:
    async with open_store(seeded) as store:
        prefs = ScopedStateDelta(scope="user", owner="alice", changes={"lang": "fr"})
        await store.append_messages("chat", MessageCommit(messages=(), scoped_state=(prefs,)))
    declined = helix("erase-user", seeded, "alice", stdin="n\n")
    assert declined.code == 1 and "nothing erased" in declined.err
    assert "erase user 'alice'" in declined.err and _exists(helix, seeded, "chat")

    done = helix("erase-user", seeded, "alice", "--json", stdin="yes\n")
    assert done.code == 0, done.err
    assert json.loads(done.out) == {"user": "alice", "erased": ["chat", "quiet"]}
    assert not _exists(helix, seeded, "chat") and not _exists(helix, seeded, "quiet")
    assert _exists(helix, seeded, "other") and _exists(helix, seeded, "orphan")
    async with open_store(seeded) as store:
        assert await store.get_scoped_state("user", "alice") == {}
    again = helix("erase-user", seeded, "alice", "--yes")
    assert again.code == 0 and again.out == "erased user alice: 0 session(s)\n", again.err
