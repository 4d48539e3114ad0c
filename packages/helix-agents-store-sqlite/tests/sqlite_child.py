"""A child process acting on a store file, for the cross-process tests.

``python sqlite_child.py ACTION DB [ARGS...]``: opens the store, prints ``ready``,
waits for one line on stdin (so a parent can release many children at once),
does ACTION and prints its outcome as one line of JSON. ``open`` waits for
the line first and then opens the file.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from helix_agents.core import ChatMessage, MessageCommit, StateStoreError
from helix_agents.core.errors import is_message_count_conflict
from helix_agents.store_sqlite import SQLiteEngine, SQLiteStateStore


def stall_at_commit(statement: str) -> None:
    """A trace callback that parks the writer's thread when its transaction is about to
    ``COMMIT``: every statement of the commit has run, the write lock is held."""
    if statement == "COMMIT":
        print("mid-commit", flush=True)
        time.sleep(3600)


def _rows(tag: str, n: int, size: int = 0) -> tuple[ChatMessage, ...]:
    pad = "x" * size
    return tuple(ChatMessage(role="user", content=f"{tag}:{i}:{pad}") for i in range(n))


async def main(action: str, db: str, args: list[str]) -> dict[str, Any]:
    if action == "open":
        # Released before opening, so that every child creates the schema at once.
        print("ready", flush=True)
        sys.stdin.readline()
        async with SQLiteStateStore(db):
            return {"opened": True}
    async with SQLiteStateStore(db) as store:
        print("ready", flush=True)
        sys.stdin.readline()
        if action == "append":
            sid, expect, tag = args[0], int(args[1]), args[2]
            try:
                commit = MessageCommit(messages=_rows(tag, 2), expect_message_count=expect)
                result = await store.append_messages(sid, commit)
            except StateStoreError as exc:
                return {"landed": False, "conflict": is_message_count_conflict(exc)}
            return {"landed": True, "first_index": result.first_index}
        if action == "send-once":
            sid, expect, commit_id = args[0], int(args[1]), args[2]
            commit = MessageCommit(
                messages=_rows(commit_id, 2), expect_message_count=expect, commit_id=commit_id
            )
            result = await store.append_messages(sid, commit)
            return {"replayed": result.replayed, "span": [result.first_index, result.message_count]}
        if action == "resolve":
            return {"answer": await store.resolve_approval(args[0], args[1])}
        if action == "stall-commit":
            sid, n, size = args[0], int(args[1]), int(args[2])
            # The writer's connection (white-box): no public hook runs inside a commit.
            assert isinstance(store.engine, SQLiteEngine)
            writer = store.engine._writer
            assert writer is not None and writer._db is not None
            await writer._hop(writer._db.set_trace_callback, stall_at_commit)
            await store.append_messages(sid, MessageCommit(messages=_rows("stalled", n, size)))
            return {"stalled": False}
        if action == "commit-loop":
            sid, n, prefix = args[0], int(args[1]), args[2]
            for turn in range(1_000_000):
                tag = f"{prefix}t{turn}"
                await store.append_messages(sid, MessageCommit(messages=_rows(tag, n, 64)))
                print(json.dumps({"landed": tag}), flush=True)
        raise SystemExit(f"unknown action {action!r}")


if __name__ == "__main__":
    outcome = asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
    print(json.dumps(outcome), flush=True)
