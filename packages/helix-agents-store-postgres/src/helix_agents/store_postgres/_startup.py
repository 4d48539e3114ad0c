"""Why PostgreSQL refused a new connection, told without reading its language.

libpq translates its messages by the client's locale (``LANGUAGE``,
``LC_MESSAGES``, ``LANG``) and the server by its ``lc_messages``; and psycopg
gives a failed connect no SQLSTATE. So a refusal that retrying cannot fix is
told, first match wins, from:

1. the SQLSTATE, when the driver has one;
2. the failed connection's flags: libpq needed a password and had none;
3. a file of the conninfo's TLS settings named in the message (libpq quotes
   the path in every language), or OpenSSL's reason, which is never translated;
4. the first connect only: how the server answers a TLS request on a socket of
   its own (:func:`tls_answer`): not as PostgreSQL does, or "no TLS" when
   ``sslmode`` requires it;
5. English marks of libpq's and the server's messages — the only place that
   reads the text, for precise kinds and the transient refusals (out of
   connection slots, starting up) a server tells by SQLSTATE only;
6. failing those, a server refusal after a password was sent, or one that
   names the conninfo's database or role: authentication, unknown database or
   role. (A server speaking another language that is out of connection slots
   *for that role or database* is then taken as misconfigured.)
"""

from __future__ import annotations

import asyncio
import os
import re
import struct

import psycopg

__all__ = ["refusal", "tls_answer"]

AUTHENTICATION = "authentication"
UNKNOWN = "unknown database or role"
TLS = "TLS/SSL"
NOT_POSTGRES = "not a PostgreSQL server"

# SQLSTATE classes and codes of refusals (docs/backends/postgres.md, "Connecting").
_BY_SQLSTATE = {"28": AUTHENTICATION, "3D": UNKNOWN, "42501": AUTHENTICATION}
# libpq's TLS files, and the defaults it reads under ~/.postgresql when one is not set.
_TLS_FILES = {
    "sslrootcert": "root.crt",
    "sslcert": "postgresql.crt",
    "sslkey": "postgresql.key",
    "sslcrl": "root.crl",
}
# OpenSSL's reasons (libpq's "SSL error: %s"): OpenSSL has no translations.
_OPENSSL = ("certificate verify failed", "tlsv1 alert", "sslv3 alert", "wrong version number")
_REQUIRES_TLS = frozenset({"require", "verify-ca", "verify-full"})

# Last resort, English only: first match wins. A TLS session cut mid-way and a
# server out of slots or not ready are transient; a non-PostgreSQL server also
# fails the TLS negotiation. The marks hold a space or punctuation, so that no
# host name in the message can match one.
_ENGLISH = (
    (
        None,
        (
            "ssl syscall",
            "eof detected",
            "unexpected eof",
            "closed unexpectedly",
            "too many",
            "connection slots are reserved",
            "is starting up",
            "is shutting down",
            "not yet accepting connections",
            "not accepting connections",
        ),
    ),
    (
        NOT_POSTGRES,
        (
            "invalid response to ssl negotiation",
            "expected authentication request",
            "unsupported frontend protocol",
        ),
    ),
    (
        TLS,
        (
            "ssl error:",
            "does not support ssl",
            "root certificate file",
            "server certificate for",
            "certificate file",
            "private key file",
            "sslmode ",
            "sslrootcert=",
        ),
    ),
    (
        AUTHENTICATION,
        (
            "authentication failed",
            "no password supplied",
            "pg_hba.conf",
            "not permitted to log in",
            "permission denied",
        ),
    ),
    (UNKNOWN, ("does not exist",)),
    ("connection option", ("invalid connection option", "invalid integer value", "invalid value")),
)


def refusal(exc: psycopg.Error, answer: bytes | None = None) -> str | None:
    """The kind of a refused connect retrying cannot fix, or ``None`` when it may pass.

    ``answer`` is the server's first byte to a TLS request (:func:`tls_answer`),
    if the caller asked.
    """
    code = exc.sqlstate
    if code is not None:
        return _BY_SQLSTATE.get(code) or _BY_SQLSTATE.get(code[:2])
    text, options = str(exc), _options(exc)
    lower = text.lower()
    if exc.pgconn is not None and exc.pgconn.needs_password:
        return AUTHENTICATION
    if _names_tls_file(text, options) or any(mark in lower for mark in _OPENSSL):
        return TLS
    if answer:
        if answer not in (b"S", b"N"):
            return NOT_POSTGRES
        if answer == b"N" and options.get("sslmode") in _REQUIRES_TLS:
            return TLS
    for kind, marks in _ENGLISH:
        if any(mark in lower for mark in marks):
            return kind
    if exc.pgconn is not None and exc.pgconn.used_password:
        return AUTHENTICATION
    return UNKNOWN if _names_target(text, options) else None


def _options(exc: psycopg.Error) -> dict[str, str]:
    """The failed connection's options (the password among them: never shown)."""
    if exc.pgconn is None:
        return {}
    return {
        o.keyword.decode(): o.val.decode(errors="replace")
        for o in exc.pgconn.info
        if o.val is not None
    }


def _names_tls_file(text: str, options: dict[str, str]) -> bool:
    home = os.path.expanduser("~/.postgresql")
    files = {options.get(key) or os.path.join(home, name) for key, name in _TLS_FILES.items()}
    return any(os.sep in path and path in text for path in files)


def _names_target(text: str, options: dict[str, str]) -> bool:
    """The server's refusal names the database or the role, in whatever language.

    The server's part of the message follows libpq's ``… port N failed:`` and
    the server's severity, which libpq formats as ``<SEVERITY>:  `` (two spaces).
    """
    port = options.get("port", "").rpartition(",")[2]
    after_port = re.split(rf"\b{port}\b", text, maxsplit=1) if port.isdigit() else []
    severity = re.search(r"[^\W\d_]+:  ", after_port[-1]) if len(after_port) == 2 else None
    if severity is None:
        return False
    server = after_port[-1][severity.end() :]
    names = [name for name in (options.get("dbname"), options.get("user")) if name]
    return any(re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w.-])", server) for n in names)


_SSL_REQUEST = struct.pack("!ii", 8, 80877103)


async def tls_answer(exc: psycopg.Error, wait: float) -> bytes | None:
    """The first byte the failed connection's server answers to a TLS request, within ``wait`` s.

    ``b"S"`` or ``b"N"`` from PostgreSQL; anything else from another server;
    ``None`` when nothing answers, or when the server got as far as asking
    for a password (it speaks PostgreSQL).
    """
    pgconn = exc.pgconn
    if pgconn is None or pgconn.used_password or pgconn.needs_password:
        return None
    host = (pgconn.hostaddr or pgconn.host).decode(errors="replace")
    try:
        port = int(pgconn.port or b"5432")
        async with asyncio.timeout(wait):
            if host.startswith("/"):
                reader, writer = await asyncio.open_unix_connection(f"{host}/.s.PGSQL.{port}")
            else:
                reader, writer = await asyncio.open_connection(host, port)
            try:
                writer.write(_SSL_REQUEST)  # not drained: a server that spoke first may be gone
                return await reader.read(1) or None
            finally:
                writer.close()
    except (OSError, TimeoutError, ValueError):
        return None
