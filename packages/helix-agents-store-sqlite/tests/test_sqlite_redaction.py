"""RED-6 and ERA-5 on SQLite: once redacted or erased, the data is in neither the database
file nor its WAL."""

from __future__ import annotations

from pathlib import Path

import pytest

from helix_agents.contract._helpers import commit, user
from helix_agents.contract.erasure_data import ERASED_TEXT, write_user_data
from helix_agents.contract.redaction_scan import SECRET, redact_secret_rows, write_secret_rows
from helix_agents.store_sqlite import SQLiteStateStore

pytestmark = pytest.mark.anyio


def _files_holding(path: Path, text: str) -> list[str]:
    """The files of the database (the WAL, while it exists) that hold ``text``."""
    files = (path, path.with_name(path.name + "-wal"))
    return [p.name for p in files if p.exists() and text.encode() in p.read_bytes()]


async def test_redacted_text_leaves_the_database_files(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    async with SQLiteStateStore(str(path)) as store:
        await write_secret_rows(store, "s")
        assert _files_holding(path, SECRET)  # the scan sees the text while it is stored
        await redact_secret_rows(store, "s")
        assert _files_holding(path, SECRET) == []  # the store still open
        assert [m.role for m in await store.get_messages("s")][:5] == [
            "user",
            "user",
            "assistant",
            "tool",
            "context",
        ]
    assert _files_holding(path, SECRET) == []


async def test_an_erased_user_leaves_the_database_files(tmp_path: Path) -> None:
    """ERA-5: neither the user's id, nor the session ids, nor their text remain."""
    path = tmp_path / "store.db"
    gone, sids = "erased-user-51c2", ["erased-session-1a", "erased-session-2b"]
    async with SQLiteStateStore(str(path)) as store:
        await write_user_data(store, gone, sids)
        await store.create_session("kept", user_id="kept-user-77e0")
        await store.append_messages("kept", commit(user("kept-text-0d9a")))
        needles = (gone, *sids, ERASED_TEXT)
        assert all(_files_holding(path, n) for n in needles)  # seen while stored
        assert await store.erase_user(gone) == sids
        assert [n for n in needles if _files_holding(path, n)] == []
        assert _files_holding(path, "kept-text-0d9a")
    assert [n for n in needles if _files_holding(path, n)] == []
