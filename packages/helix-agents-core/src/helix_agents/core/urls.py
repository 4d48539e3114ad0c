"""Store URLs as they may appear in messages: with every secret masked."""

from __future__ import annotations

import re

__all__ = ["redact_url"]

MASK = "***"

# The password of ``scheme://user:password@host`` (or ``://:password@``): everything
# between the first ':' of the authority and its last '@'. Greedy up to the last '@'
# before the path, since a password may itself hold an unescaped '@' or ':'.
_USERINFO = re.compile(r"(?P<head>//[^/?#:@]*:)(?P<secret>[^/?#]*)(?P<tail>@)")
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


def redact_url(url: object) -> str:
    """``url`` as text with its password and secret options replaced by ``***``.

    Never raises, also for malformed URLs and non-strings: it is what error
    messages, reprs and logs show instead of the URL itself.
    """
    text = url if isinstance(url, str) else repr(url)
    text = _USERINFO.sub(lambda m: f"{m['head']}{MASK}{m['tail']}", text)
    text = _KEYWORD_PASSWORD.sub(lambda m: f"{m['head']}{MASK}", text)
    return _SECRET_PARAM.sub(lambda m: f"{m['head']}{MASK}", text)
