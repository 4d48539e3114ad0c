"""RED-6 on SQLite: once redacted, the text is in neither the database file nor its WAL."""

from __future__ import annotations

from pathlib import Path

import pytest

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
