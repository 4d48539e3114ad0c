"""Several openers of one new file at the same instant all get a working store.

Switching a new file to WAL needs it to itself, and SQLite refuses at once
instead of waiting when another connection is there; the store must wait its
turn (up to ``busy_timeout``) like any other writer.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from helix_agents.core import ChatMessage, MessageCommit
from helix_agents.store_sqlite import SQLiteStateStore

ROUNDS = 60
OPENERS = 4


def _open_and_append(db: Path, session_id: str, barrier: threading.Barrier) -> str:
    async def run() -> str:
        store = SQLiteStateStore(db)
        await asyncio.to_thread(barrier.wait)
        async with store:
            await store.create_session(session_id)
            await store.append_messages(
                session_id, MessageCommit(messages=(ChatMessage(role="user", content=session_id),))
            )
            rows = await store.get_messages(session_id)
        return str(rows[0].content)

    try:
        return asyncio.run(run())
    except Exception as exc:  # reported, not swallowed: the assertion names it
        return f"{type(exc).__name__}: {exc}"


def _race(db: Path) -> list[str]:
    barrier = threading.Barrier(OPENERS)
    results = [""] * OPENERS

    def opener(i: int) -> None:
        results[i] = _open_and_append(db, f"s{i}", barrier)

    threads = [threading.Thread(target=opener, args=(i,)) for i in range(OPENERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [r for i, r in enumerate(results) if r != f"s{i}"]


def test_openers_of_a_new_file_at_once_all_succeed(tmp_path: Path) -> None:
    failures = [f for round_ in range(ROUNDS) for f in _race(tmp_path / f"new-{round_}.db")]
    assert failures == []
