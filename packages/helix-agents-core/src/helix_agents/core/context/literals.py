"""Literals every match of an RE2 pattern must contain: a cheap prefilter on stored rows.

A store can skip, without parsing it, every row whose stored JSON text lacks
a literal the pattern cannot match without (SQLite with ``instr``, Redis in
Lua, which has no regular expressions); RE2 decides on the rest. A literal is
taken only where that is certain: a pattern without alternation or flags, at
group depth 0, not made optional by a quantifier, and of characters JSON
writes as themselves (so the row's stored text holds it verbatim). When in
doubt there is no literal, and no row is skipped.
"""

from __future__ import annotations

__all__ = ["required_literal", "safe_literal"]

_SPECIAL = set(".^$*+?()[]{}|\\")
_OPTIONAL = set("?*{")
MIN_LITERAL = 3


def safe_literal(value: str) -> bool:
    """Whether ``value`` appears verbatim in a row's JSON text wherever the row holds it."""
    return all(" " <= c <= "~" and c not in '"\\()' for c in value)


def required_literal(pattern: str) -> str | None:
    """The longest literal every match of ``pattern`` contains; ``None`` when unsure."""
    if "|" in pattern or "(?" in pattern:
        return None
    runs: list[str] = []
    run: list[str] = []
    depth = 0
    i = 0
    while i < len(pattern):
        char = pattern[i]
        literal: str | None = None
        width = 1
        if char == "\\" and i + 1 < len(pattern):
            code = pattern[i + 1]
            width = 2
            if not code.isalnum():
                literal = code
        elif char not in _SPECIAL:
            literal = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "[":
            close = pattern.find("]", i + 2)
            width = (close - i + 1) if close > 0 else len(pattern) - i
        following = pattern[i + width] if i + width < len(pattern) else ""
        if literal is not None and depth == 0 and following not in _OPTIONAL:
            run.append(literal)
            if following == "+":
                runs.append("".join(run))
                run = []
        else:
            runs.append("".join(run))
            run = []
        i += width
    runs.append("".join(run))
    best = max((r for r in runs if safe_literal(r)), key=len, default="")
    return best if len(best) >= MIN_LITERAL else None
