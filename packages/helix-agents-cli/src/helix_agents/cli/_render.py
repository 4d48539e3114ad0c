"""Output for people (rich tables on stdout) and for scripts (``--json``)."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import Any

from rich.console import Console

from ._errors import quiet_closed_pipe

__all__ = ["err_console", "out_console", "print_json", "short", "when"]


class _Console(Console):
    """Rich's console, ending with exit 0 when stdout's reader left (rich exits 1)."""

    def on_broken_pipe(self) -> None:
        """Called by rich when a write to the console's file raised ``BrokenPipeError``."""
        quiet_closed_pipe()


def out_console() -> Console:
    """The console on stdout; no colour codes when stdout is not a terminal."""
    return _Console(highlight=False)


def err_console() -> Console:
    """The console on stderr: progress bars and notes, never data."""
    return Console(stderr=True, highlight=False)


def print_json(value: Any) -> None:
    """``value`` as one JSON document on stdout."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def when(at: datetime | None) -> str:
    """A timestamp as shown in tables: UTC to the second."""
    return "" if at is None else at.strftime("%Y-%m-%d %H:%M:%S%z")


def short(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
