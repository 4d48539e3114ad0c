"""Store URLs as they may appear in messages: with every secret masked."""

from __future__ import annotations

import re

from .errors import ValidationError

__all__ = ["check_userinfo", "redact_url"]

MASK = "***"

# The password of ``scheme://user:password@host`` (or ``://:password@``): everything
# from the first ':' after the user name to the last '@' before the next whitespace.
# A password may hold any character its user forgot to escape ('@', ':', '/', '?',
# '#'), and a multi-host URL may repeat ``user:password@`` per host, so the '@' that
# ends it is the last one: masking a path or query that holds an '@' too is the price.
_USERINFO = re.compile(r"(?P<head>//[^/?#:@\s]*:)(?P<secret>\S*)(?P<tail>@)")
# Query or option values that name a secret, whatever the backend calls them.
_SECRET_PARAM = re.compile(
    r"(?P<head>[?&;\s][\w.-]*(?:password|passwd|pwd|secret|token|auth|sslkey|api_?key|"
    r"access_key|credential)[\w.-]*=)(?P<secret>[^&#\s]*)",
    re.IGNORECASE,
)
# libpq keyword/value strings: ``password=secret`` or ``password='s e c r e t'``.
_KEYWORD_PASSWORD = re.compile(
    r"(?P<head>\bpassword\s*=\s*)(?P<secret>'(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE
)


# ``scheme://`` then a name and ':' before any '/', '?', '#' or '@': a user name and a
# password, or a host and a port.
_AUTHORITY = re.compile(r"[a-zA-Z][\w+.-]*://[^/?#:@\s]*:")
_RESERVED = re.compile(r"[/?#\s]")


def check_userinfo(url: str) -> None:
    """Refuse a URL whose password holds a character it must percent-encode.

    In ``redis://:pa/ss@host/0`` the password ends, for every URL parser, at the
    ``/``: the rest reads as a port, a path or a query, and would reach error
    messages in clear. Such a URL (an '@' after a '/', '?', '#' or blank that follows
    ``user:`` or ``host:``) is a :class:`ValidationError` showing none of it.
    """
    head = _AUTHORITY.match(url)
    at = url.rfind("@")
    if head is None or at < head.end() or not _RESERVED.search(url, head.end(), at):
        return
    scheme = url[: url.index("://")]
    raise ValidationError(
        f"store URL '{scheme}://***@{redact_url(url[at + 1 :])}' is not valid: the part "
        "before its last '@' holds '/', '?', '#' or a blank; percent-encode them in a "
        "password (%2F, %3F, %23, %20), and an '@' in a password or a query value (%40)"
    )


def redact_url(url: object) -> str:
    """``url`` as text with its password and secret options replaced by ``***``.

    Never raises, also for malformed URLs and non-strings: it is what error
    messages, reprs and logs show instead of the URL itself.
    """
    text = url if isinstance(url, str) else repr(url)
    text = _USERINFO.sub(lambda m: f"{m['head']}{MASK}{m['tail']}", text)
    text = _KEYWORD_PASSWORD.sub(lambda m: f"{m['head']}{MASK}", text)
    return _SECRET_PARAM.sub(lambda m: f"{m['head']}{MASK}", text)
