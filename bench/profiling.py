"""Profile one subject's turns with pyinstrument, to see where a missed target goes."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from pyinstrument import Profiler

from .config import Servers, Settings
from .systems import all_subjects
from .throughput import run_turns, start_sessions
from .workload import make_turn

__all__ = ["profile"]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


async def profile(name: str, settings: Settings, servers: Servers, out: Path) -> str:
    """Run one repetition of ``name`` under the profiler; write HTML to ``out``, return text."""
    with tempfile.TemporaryDirectory(prefix="helixbench-") as tmp:
        chosen = [s for s in all_subjects(servers, Path(tmp)) if s.name == name]
        if not chosen:
            names = ", ".join(s.name for s in all_subjects(servers, Path(tmp)))
            raise SystemExit(f"no subject {name!r}; choose one of: {names}")
        subject = chosen[0]
        await subject.open()
        try:
            warm_sessions = [f"w-{i:02d}" for i in range(settings.sessions)]
            sessions = [f"p-{i:02d}" for i in range(settings.sessions)]
            await start_sessions(subject, warm_sessions + sessions)
            warm = [make_turn(i) for i in range(settings.warmup_turns)]
            await run_turns(subject, warm_sessions, warm, settings.read_last)
            turns = [make_turn(1_000_000 + i) for i in range(settings.turns)]
            profiler = Profiler(interval=0.0005, async_mode="enabled")
            with profiler:
                await run_turns(subject, sessions, turns, settings.read_last)
        finally:
            await subject.close()
    await asyncio.to_thread(_write, out, profiler.output_html())
    return str(profiler.output_text(unicode=True, color=False, show_all=False))
