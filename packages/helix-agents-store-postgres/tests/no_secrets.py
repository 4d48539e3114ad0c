"""Checks that a secret shows nowhere: not in an error, its causes, a repr or a log record."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterable, Iterator
from urllib.parse import quote

__all__ = ["assert_not_shown", "chain"]


def chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and every exception it names as its cause or context."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [error]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [current.__cause__, current.__context__]


def _forms(secret: str) -> set[str]:
    return {secret, quote(secret, safe=""), quote(secret)}


def assert_not_shown(
    secret: str,
    *,
    error: BaseException | None = None,
    records: Iterable[logging.LogRecord] = (),
    texts: Iterable[str] = (),
) -> None:
    """Fail if ``secret`` (plain or percent-encoded) appears in any of the places given.

    For an error: the message, ``repr`` and printed traceback of every
    exception in its chain, and any connection object a driver error carries.
    """
    shown = list(texts)
    if error is not None:
        shown.append("".join(traceback.format_exception(error)))
        for exc in chain(error):
            shown += [str(exc), repr(exc), repr(vars(exc)) if hasattr(exc, "__dict__") else ""]
            assert getattr(exc, "pgconn", None) is None, f"{exc!r} carries its connection"
    for record in records:
        shown.append(record.getMessage())
        if record.exc_info and record.exc_info[1] is not None:
            shown.append("".join(traceback.format_exception(record.exc_info[1])))
    for text in shown:
        for form in _forms(secret):
            assert form not in text, f"secret shown in: {text!r}"
