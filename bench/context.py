"""The context store: a 1 MB output read back by grep, a history search over 100,000 rows.

Per backend: one session gets a 1 MB log (about 17,000 lines, five of them
errors) stored as an output, and ``history_rows`` rows seeded through the
public API in large commits, with one row near the start holding a detail;
a ``hybrid`` compaction then moves the window to the last 100 rows. The
search looks for that detail, the worst case: every newer row is read first.
"""

from __future__ import annotations

import logging
import math
from typing import Any, cast

from helix_agents.core import ChatMessage, MessageCommit
from helix_agents.core.context import Compaction, ContextStore

from .config import Settings
from .inspector import open_session_page
from .stats import Latencies, timed
from .systems.ours import HelixSubject, turn_rows
from .workload import make_turn

__all__ = ["measure_context", "one_mb_log"]

log = logging.getLogger("bench.context")

_SEED_TURNS = 334  # turns per seeding commit: 1,002 rows
# The longest session whose inspector page reads every record (dump_session: every row and
# output text) rather than one page and the protocol's listings (docs/inspector.md INS-18).
INSPECTOR_FULL_ROWS = 10_000
_NEEDLE = "the rollback code is 4711-ZETA"


def one_mb_log() -> str:
    """1,000,000 characters of request logs with five ERROR lines spread through them."""
    lines = [
        f"2026-01-01T00:{i // 60 % 60:02}:{i % 60:02} INFO request {i:06} served in {i % 97} ms"
        for i in range(18_000)
    ]
    for k in range(5):
        lines[1_000 + k * 3_300] = f"2026-01-01T01:00:0{k} ERROR upstream timeout on shard {k}"
    return ("\n".join(lines) + "\n")[:1_000_000]


async def _seed(store: Any, sid: str, rows: int) -> None:
    await store.create_session(sid, user_id="context")
    first = (ChatMessage(role="user", content=f"Remember: {_NEEDLE}."),)
    await store.append_messages(sid, MessageCommit(messages=first, expect_message_count=0))
    count = 1
    while count < rows:
        n = min(_SEED_TURNS, math.ceil((rows - count) / 3))
        batch = [m for i in range(n) for m in turn_rows(make_turn(count + i))][: rows - count]
        await store.append_messages(sid, MessageCommit(messages=batch, expect_message_count=count))
        count += len(batch)


async def measure_context(subject: HelixSubject, settings: Settings) -> dict[str, Any]:
    """Latencies of grep and a ranged read on a 1 MB output, and of the history search."""
    store = cast(ContextStore, subject.store)
    sid = "context-bench"
    await _seed(subject.store, sid, settings.history_rows)
    await store.record_compaction(
        sid, Compaction(boundary=settings.history_rows - 100, summary="earlier work")
    )
    ref = await store.store_output(sid, one_mb_log(), tool_name="logs")
    full_sid = "context-bench-full"
    await _seed(subject.store, full_sid, INSPECTOR_FULL_ROWS)
    await store.store_output(full_sid, one_mb_log(), tool_name="logs")
    grep, read, search, page = Latencies(), Latencies(), Latencies(), Latencies()
    full_page = Latencies()
    for _ in range(settings.context_ops):
        found: Any = None

        async def do_grep() -> None:
            nonlocal found
            found = await store.grep_output(sid, ref.output_id, r"ERROR \w+", context_lines=1)

        grep.add(await timed(do_grep))
        assert found.matches == 5, found.note

        async def do_read() -> None:
            await store.read_output(sid, ref.output_id, start_line=9_000, end_line=9_100)

        read.add(await timed(do_read))

        async def do_search() -> None:
            nonlocal found
            found = await store.search_history(sid, grep=r"rollback code is \S+", limit=20)

        search.add(await timed(do_search))
        assert [h.index for h in found.hits] == [0], found.note

        async def do_page() -> None:
            await open_session_page(subject.store, sid)

        page.add(await timed(do_page))

        async def do_full_page() -> None:
            await open_session_page(subject.store, full_sid)

        full_page.add(await timed(do_full_page))
    log.info("context: %s done", subject.name)
    return {
        "output_chars": ref.chars,
        "history_rows": settings.history_rows,
        "grep_1mb": grep.summary(),
        "read_range": read.summary(),
        "history_search": search.summary(),
        "inspector_page": page.summary(),
        "inspector_full_rows": INSPECTOR_FULL_ROWS,
        "inspector_full_page": full_page.summary(),
    }
