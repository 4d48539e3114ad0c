"""Grep patterns, compiled by RE2: matching time is linear in the text, whatever the pattern."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, TypeAlias

import re2

from .errors import InvalidPatternError

__all__ = ["MAX_PATTERN_CHARS", "Pattern", "compile_pattern"]

MAX_PATTERN_CHARS = 1_000
"""The longest pattern accepted; longer ones are refused rather than compiled."""

# RE2 refuses a pattern whose compiled program would exceed this memory, so a
# pattern that is merely huge cannot cost more than this either.
_MAX_PROGRAM_BYTES = 8 << 20

if TYPE_CHECKING:
    Pattern: TypeAlias = re2._Regexp[str]
else:
    Pattern: TypeAlias = re2._Regexp


def _options() -> re2.Options:
    options = re2.Options()
    options.max_mem = _MAX_PROGRAM_BYTES
    options.log_errors = False
    return options


@functools.lru_cache(maxsize=256)
def _compile(pattern: str) -> Pattern:
    return re2.compile(pattern, _options())


def compile_pattern(pattern: object, *, session_id: str | None = None) -> Pattern:
    """``pattern`` compiled by RE2; anything RE2 refuses is an :class:`InvalidPatternError`.

    RE2 syntax is Perl's without backreferences and lookaround (which have no
    linear-time algorithm); ``(?i)`` at the start ignores case.
    """
    where = f"session {session_id!r}: " if session_id is not None else ""
    if not isinstance(pattern, str) or not pattern:
        raise InvalidPatternError(
            f"{where}a grep pattern must be a non-empty string, got {pattern!r}",
            session_id=session_id,
        )
    if len(pattern) > MAX_PATTERN_CHARS:
        raise InvalidPatternError(
            f"{where}grep pattern of {len(pattern)} characters is longer than {MAX_PATTERN_CHARS}",
            session_id=session_id,
        )
    try:
        return _compile(pattern)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
        raise InvalidPatternError(
            f"{where}grep pattern {pattern!r} is not valid RE2 syntax: {reason} "
            f"(backreferences and lookaround are not supported)",
            session_id=session_id,
        ) from None
