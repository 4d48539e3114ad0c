"""The statements the store sends: each operation is ONE statement, so one round trip.

Writes call the server-side functions of ``functions/*.sql``; reads are
single SELECTs whose first table is the session row (the last rows: through
``__agents_tail`` of ``functions/reads.sql``, which does the same), so that "no such session" and
the data come back together, from one snapshot. Every
statement names its schema explicitly (no ``search_path``, no session state
but psycopg's prepared statements, which ``prepare=off`` turns off for
PgBouncer's transaction pooling before 1.21). JSON comes back as text, decoded
by the store.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from psycopg import sql

__all__ = ["Statements"]

_SESSION_ROW = "FROM {s}.__agents_sessions x "


def _call(name: str, *casts: str) -> bytes:
    """The call of ``__agents_<name>`` with its result as JSON text: an argument for each
    of ``casts``, cast to that type (``""``: no cast)."""
    args = ", ".join(f"%s::{cast}" if cast else "%s" for cast in casts)
    return f"SELECT {{s}}.__agents_{name}({args})::text".encode()


def _bodies(table: bytes, on: bytes, order: bytes) -> bytes:
    """The bodies of the session's rows of ``table`` that match ``on``, in ``order``; one
    NULL body for a session with none, no row for no session."""
    return (
        b"SELECT c.body::text " + _SESSION_ROW.encode() + b"LEFT JOIN {s}." + table + b" c"
        b" ON c.session_id = x.session_id" + on + b" WHERE x.session_id = %s" + order
    )


def _page(compare: bytes, desc: bytes) -> bytes:
    """Up to ``limit`` rows whose index is ``compare`` the given one, nearest first, with
    the session's counts (one NULL row for none; no row for no session)."""
    return (
        b"SELECT x.first_index, x.message_count, m.body::text "
        + _SESSION_ROW.encode()
        + b"LEFT JOIN LATERAL (SELECT idx, body FROM {s}.__agents_messages"
        b"  WHERE session_id = x.session_id AND idx " + compare + b" %s::bigint"
        b" ORDER BY idx" + desc + b" LIMIT %s) m"
        b" ON true WHERE x.session_id = %s ORDER BY m.idx" + desc
    )


@dataclass(frozen=True)
class Statements:
    """Every statement of the store, rendered once for its schema."""

    # Writes: server-side functions returning JSON (a result or a refusal).
    commit: bytes = _call("commit_scoped", "text", "jsonb", "jsonb", "", "bigint", "jsonb")
    # A commit without scoped-state deltas skips the wrapper (its call costs the server ~7%).
    commit_plain: bytes = _call("commit", "text", "jsonb", "jsonb", "", "bigint")
    truncate: bytes = _call("truncate", "text", "bigint", "text", "")
    pop: bytes = _call("pop", "text", "bigint", "text", "")
    replace: bytes = _call("replace", "text", "bigint", "jsonb", "bigint", "text", "", "bigint")
    finish_run: bytes = _call("finish_run", "text", "text", "text", "")
    record: bytes = _call("record", "text", "boolean", "text", "timestamptz", "jsonb", "text", "")
    add_approvals: bytes = _call(
        "add_approvals", "text", "text[]", "timestamptz[]", "jsonb[]", "text", ""
    )
    resolve_approval: bytes = _call("resolve_approval", "text", "text", "")
    save_checkpoint: bytes = _call(
        "save_checkpoint", "text", "text", "bigint", "timestamptz", "jsonb", "text", ""
    )
    clear: bytes = _call("clear_scoped", "text", "")
    clone: bytes = _call("clone", "text", "text", "bigint", "")
    create: bytes = (
        b"INSERT INTO {s}.__agents_sessions"
        b" (session_id, user_id, created_at, last_activity_at, metadata)"
        b" VALUES (%s, %s, %s, %s, %s::jsonb) ON CONFLICT DO NOTHING RETURNING 1"
    )
    delete: bytes = b"SELECT {s}.__agents_delete_scoped(%s::text)"

    # Reads.
    session: bytes = (
        b"SELECT {s}.__agents_info(x)::text " + _SESSION_ROW.encode() + (b"WHERE x.session_id = %s")
    )
    counts: bytes = b"SELECT x.message_count, x.ui_count, x.first_index " + (
        _SESSION_ROW.encode() + b"WHERE x.session_id = %s"
    )
    sessions: bytes = (
        b"SELECT x.session_id, x.created_at, x.last_activity_at, x.message_count,"
        b" (SELECT count(*) FROM {s}.__agents_approvals a"
        b"  WHERE a.session_id = x.session_id AND NOT a.resolved) "
        + _SESSION_ROW.encode()
        + b"WHERE x.user_id = %(user)s AND (%(at)s::timestamptz IS NULL"
        b" OR x.last_activity_at < %(at)s"
        b" OR (x.last_activity_at = %(at)s AND x.session_id > %(id)s::text))"
        b" ORDER BY x.last_activity_at DESC, x.session_id LIMIT %(limit)s"
    )
    scoped_state: bytes = (
        b"SELECT coalesce(jsonb_object_agg(key, value), '{}')::text"
        b" FROM {s}.__agents_scoped_state WHERE scope = %s AND owner = %s"
    )
    session_state: bytes = (
        b"SELECT (SELECT coalesce(jsonb_object_agg(key, value), '{}')"
        b"  FROM {s}.__agents_scoped_state WHERE scope = 'session' AND owner = x.session_id)::text "
        + _SESSION_ROW.encode()
        + b"WHERE x.session_id = %s"
    )
    # A PL/pgSQL function, so that the plan of the read is kept (functions/reads.sql).
    messages: bytes = (
        b"SELECT t.row_text FROM {s}.__agents_tail(%s::text, %s::bigint) t ORDER BY t.row_idx"
    )
    # The same read as one SELECT (limit first, then the session): prepared, its plan is kept
    # without the function's call and row buffer.
    messages_prepared: bytes = (
        b"SELECT m.body::text " + _SESSION_ROW.encode() + b"LEFT JOIN LATERAL (SELECT r.idx, r.body"
        b" FROM {s}.__agents_messages r WHERE r.session_id = x.session_id"
        b" ORDER BY r.idx DESC LIMIT %s::bigint) m ON true WHERE x.session_id = %s ORDER BY m.idx"
    )
    page_asc: bytes = _page(b">=", b"")
    page_desc: bytes = _page(b"<", b" DESC")
    context_items: bytes = _bodies(
        b"__agents_context_items", b" AND c.delivered_at IS NULL", b" ORDER BY c.at, c.item_key"
    )
    late_answers: bytes = _bodies(
        b"__agents_late_answers", b" AND c.delivered_at IS NULL", b" ORDER BY c.at, c.call_id"
    )
    approvals: bytes = _bodies(
        b"__agents_approvals", b" AND NOT c.resolved", b" ORDER BY c.requested_at, c.approval_id"
    )
    checkpoints: bytes = _bodies(
        b"__agents_checkpoints", b"", b" ORDER BY c.message_count, c.created_at, c.checkpoint_id"
    )
    checkpoint: bytes = _bodies(b"__agents_checkpoints", b" AND c.checkpoint_id = %s::text", b"")
    latest_checkpoint: bytes = (
        b"SELECT c.body::text "
        + _SESSION_ROW.encode()
        + b"LEFT JOIN LATERAL (SELECT body FROM {s}.__agents_checkpoints"
        b"  WHERE session_id = x.session_id"
        b"  ORDER BY message_count DESC, created_at DESC, checkpoint_id DESC LIMIT 1) c ON true"
        b" WHERE x.session_id = %s"
    )

    @classmethod
    def for_schema(cls, schema: str) -> Statements:
        """The statements with ``{s}`` replaced by the quoted schema name."""
        quoted = sql.Identifier(schema).as_bytes(None)
        return cls(**{f.name: getattr(cls, f.name).replace(b"{s}", quoted) for f in fields(cls)})
