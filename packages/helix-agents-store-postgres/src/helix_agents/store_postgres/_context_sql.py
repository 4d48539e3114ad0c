"""The statements of the context store (``functions/context.sql``), rendered once per schema."""

from __future__ import annotations

from dataclasses import dataclass, fields

from psycopg import sql

__all__ = ["ContextStatements"]

_SESSION_ROW = b"FROM {s}.__agents_sessions x "
# Rows newest first, from the live log and then the archive below it; a row is a
# candidate when the server's regex (if any) and the tool filter (if any) match.
_FILTER = (
    b" AND (%(lit)s::text IS NULL OR strpos(body::text, %(lit)s::text) > 0)"
    b" AND (%(re)s::text IS NULL OR {s}.__agents_row_text(body) ~ %(re)s::text)"
    b" AND (%(tool)s::text IS NULL OR {s}.__agents_row_has_tool(body, %(tool)s::text))"
)


@dataclass(frozen=True)
class ContextStatements:
    """Every statement of the context store, for one schema."""

    store_output: bytes = (
        b"SELECT {s}.__agents_store_output(%s::text, %s::text, %s::text, %s::jsonb,"
        b" %s::text, %s)::text"
    )
    compact: bytes = (
        b"SELECT {s}.__agents_compact(%s::text, %s::bigint, %s::bigint, %s::boolean,"
        b" %s::jsonb, %s)::text"
    )
    output: bytes = (
        b"SELECT o.ref::text, CASE WHEN %s THEN o.content END "
        + _SESSION_ROW
        + b"LEFT JOIN {s}.__agents_outputs o"
        b" ON o.session_id = x.session_id AND o.output_id = %s::text"
        b" WHERE x.session_id = %s"
    )
    window: bytes = (
        b"SELECT c.number, c.boundary, c.summary::text,"
        b" EXISTS (SELECT 1 FROM {s}.__agents_preserved p WHERE p.session_id = x.session_id),"
        b" m.body::text "
        + _SESSION_ROW
        + b"LEFT JOIN LATERAL (SELECT number, boundary, summary FROM {s}.__agents_compactions"
        b"  WHERE session_id = x.session_id ORDER BY number DESC LIMIT 1) c ON true"
        b" LEFT JOIN LATERAL (SELECT idx, body FROM {s}.__agents_messages"
        b"  WHERE session_id = x.session_id AND idx >= coalesce(c.boundary, 0)) m ON true"
        b" WHERE x.session_id = %s ORDER BY m.idx"
    )
    candidates: bytes = (
        b"SELECT src, idx, body::text FROM ("
        b"(SELECT 0 AS src, idx, body FROM {s}.__agents_messages"
        b" WHERE session_id = %(sid)s AND idx < %(before)s" + _FILTER + b" ORDER BY idx DESC"
        b" LIMIT %(n)s) UNION ALL"
        b" (SELECT 1, idx, body FROM {s}.__agents_archive"
        b" WHERE session_id = %(sid)s AND idx < %(before)s" + _FILTER + b" ORDER BY idx DESC"
        b" LIMIT %(n)s)) r ORDER BY idx DESC LIMIT %(n)s"
    )

    @classmethod
    def for_schema(cls, schema: str) -> ContextStatements:
        """The statements with ``{s}`` replaced by the quoted schema name."""
        quoted = sql.Identifier(schema).as_bytes(None)
        return cls(**{f.name: getattr(cls, f.name).replace(b"{s}", quoted) for f in fields(cls)})
