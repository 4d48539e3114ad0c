"""``import``: an export file into a store (docs/export.md): the file is read once to
check it whole, then again to write it, one session at a time; an interrupted import
resumes, a repeated one writes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from helix_agents.core import StateStoreError, open_store
from helix_agents.core.transfer import ExportFileError, ImportReport, import_lines

from ._errors import CliError, ExitCode, exit_code_of
from ._progress import progress_bar
from ._render import out_console, print_json

__all__ = ["import_file"]


def _lines(path: Path) -> Iterator[str]:
    """The file's lines, split at line feeds only (JSON Lines may hold a raw U+2028)."""
    try:
        with path.open(encoding="utf-8", newline="\n") as file:
            for line in file:
                yield line.removesuffix("\n").removesuffix("\r")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read {str(path)!r}: {exc}", ExitCode.USAGE) from None


async def import_file(url: str, path: Path, *, as_json: bool) -> None:
    """Import every session and scoped-state map of the export file at ``path``."""
    name = str(path)
    written: list[str] = []
    async with open_store(url) as store:
        with progress_bar() as bar:
            task = bar.add_task("import", total=None)

            def done(sid: str) -> None:
                written.append(sid)
                bar.advance(task)

            def checked(sessions: int) -> None:
                bar.update(task, total=sessions)

            try:
                report = await import_lines(
                    store, lambda: _lines(path), name, on_checked=checked, on_session=done
                )
            except ExportFileError as exc:
                if written:  # the file changed between the check and the write
                    raise _stopped(exc, written) from exc
                raise CliError(
                    f"{exc.message} [{exc.code}]; nothing was written", ExitCode.USAGE
                ) from None
            except (StateStoreError, CliError) as exc:
                raise _stopped(exc, written) from exc
    _print(report, as_json=as_json)


def _print(report: ImportReport, *, as_json: bool) -> None:
    summary = {
        "sessions": report.sessions,
        "written": len(report.written),
        "resumed": len(report.resumed),
        "present": len(report.present),
        "maps": report.maps,
    }
    if as_json:
        print_json(summary)
        return
    out_console().print(
        f"imported {report.sessions} sessions: {len(report.written)} written, "
        f"{len(report.resumed)} resumed, {len(report.present)} already present; "
        f"{report.maps} scoped-state maps merged",
        soft_wrap=True,
    )


def _stopped(exc: StateStoreError | CliError, written: list[str]) -> CliError:
    """The error that stopped an import half-way, with the sessions it had written."""
    text = exc.message if isinstance(exc, CliError) else f"{exc.message} [{exc.code}]"
    done = ", ".join(repr(sid) for sid in written) or "none"
    return CliError(
        f"{text}; sessions fully written before it ({len(written)}): {done}; "
        "importing the file again resumes",
        exit_code_of(exc),
    )
