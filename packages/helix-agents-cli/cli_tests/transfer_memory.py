"""EXP-14: export and import in constant memory, measured (docs/export.md).

A file of ``--mb`` megabytes is generated (one real session's block, exported from a
memory store, repeated under new ids), imported by ``helix-store import`` into a new
SQLite file, exported again by ``helix-store export``, and compared with the original
line by line (the header aside). Each command runs in a process of its own, whose peak
resident set size is read from the kernel as it runs (``VmHWM``). ``make transfer-1gb`` runs it
on 1 GB; ``test_transfer_memory.py`` on two small sizes.

    python -m cli_tests.transfer_memory --mb 1024 --dir /tmp/x   (from packages/helix-agents-cli)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from itertools import zip_longest
from pathlib import Path

from helix_agents.core import ChatMessage, MessageCommit, open_store
from helix_agents.core.transfer import export_lines

HELIX_STORE = Path(sys.executable).with_name("helix-store")
TEMPLATE = "SID-TEMPLATE"
ROWS = 400  # rows of a session: its block is about 0.5 MB
MB = 1 << 20


@dataclass(frozen=True)
class Measure:
    """One round trip of a generated file through SQLite, in megabytes and seconds."""

    file_mb: float
    sessions: int
    import_peak_mb: float
    import_s: float
    export_peak_mb: float
    export_s: float


async def _template() -> list[str]:
    """The lines of one session's block (the header and the ``end`` record left out)."""
    async with open_store(f"memory://transfer-memory-{uuid.uuid4().hex}") as store:
        await store.create_session(TEMPLATE, user_id="u", metadata={"k": "v"})
        for turn in range(ROWS // 100):
            rows = tuple(
                ChatMessage(role="user" if n % 2 else "assistant", content=f"{n} " + "x" * 1100)
                for n in range(100)
            )
            commit = MessageCommit(messages=rows, commit_id=f"turn-{turn}")
            await store.append_messages(TEMPLATE, commit)
        lines = [line async for line in export_lines(store, [TEMPLATE], whole_store=True)]
    return [line.removesuffix("\n") for line in lines[1:-1]]


def generate(path: Path, mb: float) -> int:
    """Write an export file of about ``mb`` megabytes; the number of sessions in it."""
    block = asyncio.run(_template())
    size = sum(len(line) + 1 for line in block)
    sessions = max(1, round(mb * MB / size))
    header = {"type": "helix-store-export", "version": 2, "exported_at": "2026-01-01T00:00:00Z"}
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write(json.dumps(header) + "\n")
        for n in range(sessions):
            sid = f"s{n:07d}"
            out.writelines(line.replace(TEMPLATE, sid) + "\n" for line in block)
        end = {
            "type": "end",
            "sessions": sessions,
            "maps": 0,
            "records": sessions * (len(block) - 1),
        }
        out.write(json.dumps(end, separators=(",", ":")) + "\n")
    return sessions


def _high_water(pid: int) -> float:
    """The process's peak resident set size so far, in MB (``VmHWM``; 0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    kilobytes = next(
        (line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")), "0"
    )
    return int(kilobytes) / 1024


def _run(args: list[str], workdir: Path, stdout: Path | None = None) -> tuple[float, float]:
    """Run ``helix-store args``: its peak RSS in MB and its wall time.

    The peak is the process's own ``VmHWM``, read as it runs (it only grows): the
    ``ru_maxrss`` of ``wait4`` starts from the parent's size at the fork.
    """
    start = time.monotonic()
    errors = workdir / "stderr.txt"
    peak = 0.0
    with (
        open(os.devnull, "w") if stdout is None else stdout.open("w") as out,
        errors.open("w") as err,
    ):
        proc = subprocess.Popen([str(HELIX_STORE), *args], stdout=out, stderr=err)
        while proc.poll() is None:
            peak = max(peak, _high_water(proc.pid))
            time.sleep(0.02)
    took = time.monotonic() - start
    assert proc.returncode == 0, (
        f"helix-store {args[0]}: exit {proc.returncode}: {errors.read_text()}"
    )
    return peak, took


def _lines(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8", newline="\n") as file:
        yield from file


def measure(mb: float, workdir: Path) -> Measure:
    """Generate, import, export and compare a file of about ``mb`` megabytes."""
    source = workdir / f"source-{mb}.jsonl"
    again = workdir / f"again-{mb}.jsonl"
    url = f"sqlite:///{workdir / f'target-{mb}.db'}"
    sessions = generate(source, mb)
    import_peak, import_s = _run(["import", url, str(source)], workdir)
    export_peak, export_s = _run(["export", url], workdir, stdout=again)
    for n, (a, b) in enumerate(zip_longest(_lines(source), _lines(again))):
        if n:
            assert a == b, f"line {n + 1} differs after the round trip: {a[:300]!r} {b[:300]!r}"
    size = source.stat().st_size / MB
    for path in (source, again):
        path.unlink()
    return Measure(size, sessions, import_peak, import_s, export_peak, export_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=1024.0)
    parser.add_argument("--dir", type=Path, required=True)
    options = parser.parse_args()
    options.dir.mkdir(parents=True, exist_ok=True)
    print(json.dumps(asdict(measure(options.mb, options.dir))))


if __name__ == "__main__":
    main()
