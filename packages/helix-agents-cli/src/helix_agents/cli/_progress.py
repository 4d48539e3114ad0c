"""Progress bars on stderr, shown only when stderr is a terminal."""

from __future__ import annotations

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ._render import err_console

__all__ = ["progress_bar"]


def progress_bar() -> Progress:
    """A transient bar; silent when stderr is a pipe or file, so scripts see no noise."""
    console = err_console()
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )
