"""``stats`` through the installed command, on every backend."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from .conftest import Helix

pytestmark = pytest.mark.anyio


async def test_stats_counts_what_the_scope_holds(helix: Helix, seeded: str) -> None:
    done = helix("stats", seeded, "--user", "alice", "orphan", "--json")
    assert done.code == 0, done.err
    stats = json.loads(done.out)
    # chat (5 rows, 1 context), quiet (1), orphan (7); bob's session is out of scope.
    assert stats["sessions"] == 3
    assert stats["rows"] == stats["retained_rows"] == 13
    assert stats["context_rows"] == 1
    assert stats["checkpoints"] == stats["pending_approvals"] == 1
    assert stats["undelivered_context_items"] == stats["undelivered_late_answers"] == 1
    assert stats["row_bytes"] > 13 * len('{"role":"user"}')
    assert datetime.fromisoformat(stats["oldest_activity"]) <= datetime.fromisoformat(
        stats["newest_activity"]
    )
    table = helix("stats", seeded, "--user", "bob")
    assert table.code == 0 and "sessions:" in table.out and " 1\n" in table.out


async def test_stats_without_a_scope_covers_the_whole_store(helix: Helix, seeded: str) -> None:
    whole = json.loads(helix("stats", seeded, "--json").out)
    named = helix("stats", seeded, "--user", "alice", "--user", "bob", "orphan", "--json")
    assert whole == json.loads(named.out)
    assert whole["sessions"] == 4
