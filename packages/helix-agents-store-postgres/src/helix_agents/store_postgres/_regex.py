"""RE2 patterns as PostgreSQL regular expressions, for filtering rows in the server.

The server's match is a prefilter: every row it returns is matched again with
RE2, which decides. So a translation only has to match *at least* what RE2
matches on each line. Zero-width assertions are dropped (which only widens the
match), the ``n`` option keeps ``.`` and ``^``/``$`` to lines, and a pattern
with a construct that has no safe equivalent gets ``None``: the store then
filters those rows with RE2 in the client instead.
"""

from __future__ import annotations

__all__ = ["to_postgres"]

_PASS_ESCAPES = set("dDsSwWaftnrv")
_DROP_ESCAPES = set("bBAz")
_CLASS_ESCAPES = set("dswaftnrv")


def to_postgres(pattern: str) -> str | None:
    """An ARE matching a superset of ``pattern``'s matches on one line; ``None`` if unsafe."""
    out: list[str] = []
    flags = "n"
    i = 0
    if pattern.startswith("(?"):
        end = pattern.find(")")
        leading = pattern[2:end] if end > 0 else ""
        if leading and set(leading) <= set("ims"):
            if "i" in leading:
                if not pattern.isascii():
                    return None  # the server's case folding may be narrower than RE2's
                flags += "i"
            i = end + 1
    n = len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\":
            if i + 1 >= n:
                return None
            code = pattern[i + 1]
            if code in _DROP_ESCAPES:
                i += 2
                continue
            if code in _PASS_ESCAPES or not code.isalnum():
                out.append(pattern[i : i + 2])
                i += 2
                continue
            if code == "x" and i + 3 < n + 1 and _is_hex(pattern[i + 2 : i + 4]):
                out.append(f"\\u00{pattern[i + 2 : i + 4]}")
                i += 4
                continue
            if code == "Q":
                end = pattern.find("\\E", i + 2)
                literal = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
                out.extend(c if c.isalnum() else f"\\{c}" for c in literal)
                i = n if end < 0 else end + 2
                continue
            return None
        if char == "(" and pattern.startswith("(?", i):
            if pattern.startswith("(?:", i):
                out.append("(?:")
                i += 3
                continue
            for named in ("(?P<", "(?<"):
                if pattern.startswith(named, i):
                    close = pattern.find(">", i)
                    if close < 0:
                        return None
                    out.append("(")
                    i = close + 1
                    break
            else:
                return None  # flags inside the pattern
            continue
        if char == "[":
            end = _class_end(pattern, i)
            if end < 0:
                return None
            body = _class(pattern[i:end])
            if body is None:
                return None
            out.append(body)
            i = end
            continue
        out.append(char)
        i += 1
    return f"(?{flags})" + "".join(out)


def _is_hex(text: str) -> bool:
    return len(text) == 2 and all(c in "0123456789abcdefABCDEF" for c in text)


def _class_end(pattern: str, start: int) -> int:
    """The index just past the ``]`` closing the class opened at ``start``; -1 if none."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern.startswith("[:", i):
            close = pattern.find(":]", i + 2)
            if close < 0:
                return -1
            i = close + 2
            continue
        if pattern[i] == "]":
            return i + 1
        i += 1
    return -1


def _class(text: str) -> str | None:
    """A bracket expression, with the escapes the server reads the same way; else ``None``."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "\\":
            code = text[i + 1]
            if code in _CLASS_ESCAPES or not code.isalnum():
                out.append(text[i : i + 2])
            elif code == "x" and _is_hex(text[i + 2 : i + 4]):
                out.append(f"\\u00{text[i + 2 : i + 4]}")
                i += 2
            else:
                return None
            i += 2
            continue
        out.append(text[i])
        i += 1
    return "".join(out)
