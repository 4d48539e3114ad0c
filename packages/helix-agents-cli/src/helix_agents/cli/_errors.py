"""Exit codes, and errors shown as one readable line (a traceback only with ``--debug``)."""

from __future__ import annotations

import asyncio
import enum
import logging
import os
import re
import sys
import traceback
from collections.abc import Coroutine
from typing import Any, NoReturn, TypeVar

from helix_agents.core import (
    ConcurrencyConflictError,
    SessionExistsError,
    SessionNotFoundError,
    StateStoreError,
    StoreUnavailableError,
    ValidationError,
)
from helix_agents.core.backend import redact_url
from helix_agents.core.errors import MigrationError, StoreMisconfiguredError

__all__ = [
    "CliError",
    "ExitCode",
    "RedactingFormatter",
    "exit_code_of",
    "fail",
    "quiet_closed_pipe",
    "run",
]

T = TypeVar("T")


class ExitCode(enum.IntEnum):
    """What ``helix-store`` exits with; docs/cli.md lists them."""

    OK = 0
    FAILED = 1
    USAGE = 2
    NOT_FOUND = 3
    UNAVAILABLE = 4
    MIGRATION = 5
    CONFLICT = 6
    ERROR = 7
    INTERRUPTED = 130


class CliError(Exception):
    """A refusal of the command itself, with the exit code it ends with."""

    def __init__(self, message: str, code: ExitCode) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class RedactingFormatter(logging.Formatter):
    """Log lines of ``--debug`` with every URL's password masked."""

    def format(self, record: logging.LogRecord) -> str:
        """The line, through :func:`~helix_agents.core.redact_url`."""
        return redact_url(super().format(record))


def exit_code_of(exc: BaseException) -> ExitCode:
    """The exit code for an error raised while a command ran."""
    if isinstance(exc, CliError):
        return exc.code
    if isinstance(exc, ValidationError):
        return ExitCode.USAGE
    if isinstance(exc, SessionNotFoundError):
        return ExitCode.NOT_FOUND
    if isinstance(exc, StoreUnavailableError | StoreMisconfiguredError):
        return ExitCode.UNAVAILABLE
    if isinstance(exc, MigrationError):
        return ExitCode.MIGRATION
    if isinstance(exc, ConcurrencyConflictError | SessionExistsError):
        return ExitCode.CONFLICT
    return ExitCode.ERROR


# What a store's "lacks migrations" error tells a library user to do, after the names.
_LIBRARY_HINT = re.compile(r"( lacks migrations [^:]*):.*", re.DOTALL)


def quiet_closed_pipe() -> NoReturn:
    """Exit 0 when stdout's reader left (``helix-store export … | head -1``).

    Whatever is still buffered for stdout goes to ``/dev/null``, so the flush at
    exit raises nothing either.
    """
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError):  # not a file (an embedding's StringIO): nothing to flush
        raise SystemExit(ExitCode.OK) from None
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
    raise SystemExit(ExitCode.OK)


def _text(exc: BaseException, url: str | None) -> str:
    if isinstance(exc, CliError):
        return exc.message
    if not isinstance(exc, StateStoreError):
        return f"{type(exc).__name__}: {exc}"
    message = exc.message
    if isinstance(exc, MigrationError) and url is not None:
        # The command line's way to migrate, not the library's `await store.migrate()`.
        hint = f": run `helix-store migrate {redact_url(url)}`"
        message = _LIBRARY_HINT.sub(lambda m: m.group(1) + hint, message)
    return f"{message} [{exc.code}]"


def fail(exc: BaseException, *, debug: bool, url: str | None = None) -> NoReturn:
    """Print ``exc`` as one line on stderr (and its traceback with ``debug``), then exit.

    ``url`` is the command's store, for the hint of a migration error.
    """
    if isinstance(exc, BrokenPipeError):
        quiet_closed_pipe()
    if isinstance(exc, KeyboardInterrupt):
        print("helix-store: interrupted", file=sys.stderr)
        raise SystemExit(ExitCode.INTERRUPTED)
    if debug:
        sys.stderr.write(redact_url("".join(traceback.format_exception(exc))))
    text = _text(exc, url)
    # Store errors already mask secrets; this catches anything else that quoted a URL.
    line = " ".join(redact_url(text).split())
    print(f"helix-store: error: {line}", file=sys.stderr)
    raise SystemExit(exit_code_of(exc))


def run(coro: Coroutine[Any, Any, T], *, debug: bool, url: str | None = None) -> T:
    """Run a command's coroutine on the store at ``url``; any error ends the process
    through :func:`fail`."""
    try:
        result = asyncio.run(coro)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
    except (Exception, KeyboardInterrupt) as exc:
        fail(exc, debug=debug, url=url)
    return result
