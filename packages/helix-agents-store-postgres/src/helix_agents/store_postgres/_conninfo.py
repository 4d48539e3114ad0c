"""Where a store connects: the conninfo, checked up front, with its secrets kept apart."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from urllib.parse import unquote, urlsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from helix_agents.core import ValidationError
from helix_agents.core.backend import redact_url

from ._config import DEFAULT_CONNECT_TIMEOUT, seconds

__all__ = ["Target"]

# Given to libpq as keyword arguments, never in the conninfo string that the pool
# keeps and that psycopg may show: so no message, repr or log line can echo them.
_SECRETS = ("password", "sslpassword")
_SSLMODES = frozenset({"disable", "allow", "prefer", "require", "verify-ca", "verify-full"})


@dataclass(frozen=True, slots=True)
class Target:
    """A parsed conninfo: what libpq gets, the secrets it gets apart, and how it is shown."""

    conninfo: str
    shown: str
    hosts: int
    connect_timeout: float | None
    secrets: Mapping[str, str] = field(repr=False)

    @classmethod
    def parse(cls, conninfo: object) -> Target:
        """Check a ``postgresql://`` URL or libpq ``key=value`` string; :class:`ValidationError`.

        The error names the offending part but never a password.
        """
        if not isinstance(conninfo, str):
            raise ValidationError(
                f"a PostgreSQL conninfo must be a string, got {type(conninfo).__name__}"
            )
        shown = redact_url(conninfo)
        try:
            params = conninfo_to_dict(conninfo)
        except psycopg.Error as exc:
            unparsable = _unparsable(conninfo, shown, str(exc).strip())
        else:
            unparsable = ""
        if unparsable:  # raised here, so the driver's error (quoting the URL) is not its context
            raise ValidationError(unparsable)
        secrets = {k: str(params.pop(k)) for k in _SECRETS if params.get(k) is not None}
        for port in str(params.get("port") or "").split(","):
            if port and not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
                raise ValidationError(f"{shown!r}: port {port!r} is not a TCP port number")
        sslmode = params.get("sslmode")
        if sslmode is not None and sslmode not in _SSLMODES:
            raise ValidationError(
                f"{shown!r}: sslmode {sslmode!r} is not one of {', '.join(sorted(_SSLMODES))}"
            )
        timeout = params.pop("connect_timeout", None)
        return cls(
            conninfo=make_conninfo("", **params),
            shown=shown,
            hosts=max(1, str(params.get("host") or "").count(",") + 1),
            connect_timeout=None if timeout is None else _seconds_text(timeout),
            secrets=secrets,
        )

    def with_setting(self, name: str, value: str) -> Target:
        """This target with the server setting ``name=value`` for each of its connections:
        ``-c name=value`` after the conninfo's own libpq ``options`` (set at connect time,
        no statement)."""
        params = conninfo_to_dict(self.conninfo)
        options = " ".join(o for o in (str(params.get("options") or ""), f"-c {name}={value}") if o)
        return replace(self, conninfo=make_conninfo(self.conninfo, options=options))

    def scrub(self, text: str) -> str:
        """``text`` with every secret of this conninfo masked."""
        return _scrub(text, *self.secrets.values())

    def kwargs(self, connect_timeout: float | None) -> dict[str, str | int]:
        """Keyword arguments of ``psycopg`` connect: the secrets and libpq's connect timeout.

        libpq counts whole seconds in an int, at least 2; the store bounds the
        whole connect itself, to the fraction.
        """
        limit = self.timeout(connect_timeout)
        return {**self.secrets, "connect_timeout": min(2**31 - 1, max(2, math.ceil(limit)))}

    def timeout(self, connect_timeout: float | None) -> float:
        """Seconds to open one connection: the setting, else the conninfo's, else the default."""
        if connect_timeout is not None:
            return connect_timeout
        return DEFAULT_CONNECT_TIMEOUT if self.connect_timeout is None else self.connect_timeout


def _seconds_text(text: object) -> float:
    try:
        value = float(str(text))
    except ValueError:
        raise ValidationError(f"option connect_timeout={text!r} is not a number") from None
    return seconds("connect_timeout", value)


def _unparsable(conninfo: str, shown: str, reason: str) -> str:
    if "://" in conninfo:  # libpq quotes the URL it could not parse: redact it like the rest
        return f"{shown!r} is not a valid PostgreSQL URL: {_scrub(reason, _url_password(conninfo))}"
    if "password" in conninfo.lower():
        # Where a malformed key=value string's password ends is anyone's guess: show none of it.
        return "the conninfo (its password not shown) is not a valid libpq key=value string"
    return f"{shown!r} is not a valid libpq key=value string: {reason}"


def _url_password(conninfo: str) -> str:
    try:
        return urlsplit(conninfo).password or ""
    except ValueError:
        return ""


def _scrub(text: str, *secrets: str) -> str:
    text = redact_url(text)
    for secret in secrets:
        for form in {secret, unquote(secret)}:
            if form:
                text = text.replace(form, "***")
    return text
