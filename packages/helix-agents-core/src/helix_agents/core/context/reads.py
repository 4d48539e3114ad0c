"""The reads of stored outputs, once for every store: ``get_output``, ``read_output`` and
``grep_output`` on two hooks of the store (:class:`OutputReads`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from .errors import OutputNotFoundError
from .models import OutputRef, OutputSlice
from .outputs import DEFAULT_MAX_CHARS, check_read_args, grep_lines, read_lines

__all__ = ["OutputReads", "output_not_found"]

_T = TypeVar("_T")


def output_not_found(session_id: str, output_id: str) -> OutputNotFoundError:
    """The error for an output id the session does not hold (CS-6)."""
    return OutputNotFoundError(
        f"session {session_id!r} has no stored output {output_id!r}", session_id=session_id
    )


class _Hooks(Protocol):
    """What :class:`OutputReads` needs of the store."""

    async def _check_context(self, session_id: str, check: Callable[[], _T]) -> _T:
        """``check()`` after the store's own checks (open, session id), as ``check_input``."""
        ...

    async def _load_output(
        self, session_id: str, output_id: str, content: bool
    ) -> tuple[OutputRef, str]:
        """The output's reference and (if ``content``, else ``""``) its text, in one read;
        :func:`output_not_found` if the session has no such output."""
        ...


class OutputReads:
    """``get_output``, ``read_output`` and ``grep_output`` of a context store's class.

    The store supplies ``_check_context(session_id, check)`` (its open check,
    then ``check_input``) and ``_load_output(session_id, output_id, content)``
    (one read); core checks the arguments and cuts the slice.
    """

    __slots__ = ()

    async def get_output(self: _Hooks, session_id: str, output_id: str) -> OutputRef:
        """The reference of a stored output."""
        oid = await self._check_context(
            session_id, lambda: check_read_args(session_id, output_id, DEFAULT_MAX_CHARS)
        )
        return (await self._load_output(session_id, oid, False))[0]

    async def read_output(
        self: _Hooks,
        session_id: str,
        output_id: str,
        *,
        start_line: int = 1,
        end_line: int | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> OutputSlice:
        """Lines ``start_line..end_line`` of a stored output, cut to ``max_chars``."""
        oid = await self._check_context(
            session_id, lambda: check_read_args(session_id, output_id, max_chars)
        )
        _, text = await self._load_output(session_id, oid, True)
        return read_lines(
            oid,
            text,
            session_id=session_id,
            start_line=start_line,
            end_line=end_line,
            max_chars=max_chars,
        )

    async def grep_output(
        self: _Hooks,
        session_id: str,
        output_id: str,
        pattern: str,
        *,
        context_lines: int = 2,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> OutputSlice:
        """Lines of a stored output matching ``pattern``, with context, cut to ``max_chars``."""
        oid = await self._check_context(
            session_id, lambda: check_read_args(session_id, output_id, max_chars, context_lines)
        )
        _, text = await self._load_output(session_id, oid, True)
        return grep_lines(
            oid,
            text,
            pattern,
            session_id=session_id,
            context_lines=context_lines,
            max_chars=max_chars,
        )
