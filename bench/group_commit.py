"""SQLite at ``synchronous=FULL``: our store's group commit against ``SQLiteSession``.

Both run the concurrency phase's rounds (1 task, then 16 tasks on sessions of
their own); the machine's fsync time is measured beside them, since it decides
how much sharing one fsync between commits can win (docs/backends/sqlite.md).
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Any

from .concurrency import measure_concurrency
from .config import Servers, Settings
from .systems import NAMESPACE, helix_subject
from .systems.openai_sdk import SDKSQLiteSubject

__all__ = ["fsync_ms", "measure_group_commit"]


def fsync_ms(directory: Path, samples: int = 200) -> float:
    """The median milliseconds of one ``fdatasync`` after a 4 KiB append in ``directory``
    (what a WAL commit at ``FULL`` waits for)."""
    path = directory / f"{NAMESPACE}_fsync.bin"
    took = []
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for _ in range(samples):
            os.write(fd, b"\0" * 4096)
            begin = time.perf_counter()
            os.fdatasync(fd)
            took.append(time.perf_counter() - begin)
    finally:
        os.close(fd)
        path.unlink(missing_ok=True)
    return statistics.median(took) * 1000


async def measure_group_commit(
    settings: Settings, servers: Servers, workdir: Path
) -> dict[str, Any]:
    """Concurrency rounds on helix sqlite (FULL) and on ``SQLiteSession`` (FULL, SQLite's
    default), the fsync time, and the two ratios the issue sets targets for."""
    ours = helix_subject("sqlite", servers, workdir, "_group", synchronous="FULL")
    ours.name = "helix sqlite (FULL)"
    sdk = SDKSQLiteSubject(workdir / f"{NAMESPACE}_group_sdk.db")
    out: dict[str, Any] = {"fsync_ms": fsync_ms(workdir)}
    for key, subject in (("helix", ours), ("sdk", sdk)):
        await subject.open()
        try:
            out[key] = await measure_concurrency(subject, settings)
        finally:
            await subject.close()
    multi = out["helix"]["multi"]["turns_per_s"]["median"]
    out["vs_sdk_16"] = multi / out["sdk"]["multi"]["turns_per_s"]["median"]
    out["vs_own_1"] = multi / out["helix"]["single"]["turns_per_s"]["median"]
    out["fsync_ms_after"] = fsync_ms(workdir)
    return out
