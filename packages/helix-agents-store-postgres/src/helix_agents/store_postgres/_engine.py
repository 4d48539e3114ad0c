"""``PostgresEngine``: the engine seam on PostgreSQL, each primitive one statement.

A read is one call of ``__agents_snapshot``; a write one call of ``__agents_apply``,
which applies core's plan under the session row lock if the session is still at
the plan's version, and otherwise answers the current snapshot in the same round
trip (migrations/0001_initial.sql).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal

import psycopg
from psycopg import AsyncConnection, sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import tuple_row

from helix_agents.core import ConcurrencyConflictError, JsonObject
from helix_agents.core.backend import (
    Changes,
    Engine,
    NewSession,
    Refused,
    SessionDump,
    Snapshot,
    Want,
)
from helix_agents.core.errors import MigrationError
from helix_agents.core.models import ListedSession, SessionSummary

from ._codec import changes_json, snapshot, want_json
from ._dumps import Dumps
from ._migrations import check_applied, migrate, read_applied
from ._pool import Connections, Row
from ._standby import Standby
from .schema import pending_migrations

__all__ = ["PostgresEngine"]

_STATEMENTS = {
    "snapshot": "SELECT * FROM {s}.__agents_snapshot(%s::text, %s::jsonb)",
    "apply": "SELECT * FROM {s}.__agents_apply(%s::text, %s::bigint, %s::jsonb, %s::jsonb)",
    "create": "SELECT {s}.__agents_create(%s::text, %s::bigint, %s::text, %s::timestamptz,"
    " %s::text, %s::text, %s::bigint, %s::bigint)",
    "delete": "SELECT {s}.__agents_delete(%s::text)",
    "list": "SELECT session_id, created_at, last_activity_at, message_count,"
    " (SELECT count(*) FROM {s}.__agents_approvals a"
    "  WHERE a.session_id = x.session_id AND NOT a.resolved), metadata"
    " FROM {s}.__agents_sessions x WHERE user_id = %s::text AND (%s::timestamptz IS NULL"
    " OR last_activity_at < %s OR (last_activity_at = %s AND session_id > %s::text))"
    " ORDER BY last_activity_at DESC, session_id LIMIT %s",
    "all": "SELECT session_id, user_id, created_at, last_activity_at, message_count,"
    " (SELECT count(*) FROM {s}.__agents_approvals a"
    "  WHERE a.session_id = x.session_id AND NOT a.resolved), metadata"
    " FROM {s}.__agents_sessions x WHERE session_id > %s::text ORDER BY session_id LIMIT %s",
    "scoped": "SELECT coalesce(json_object_agg(name, value), '{{}}')::text"
    " FROM {s}.__agents_scoped WHERE scope = %s AND owner = %s",
}
# With a standby (FO-11): each write also answers its transaction id and WAL insert position,
# read after the function ran, in the same statement.
_COMMITTED = ", pg_current_xact_id_if_assigned()::text, pg_current_wal_insert_lsn()::text"
_COMMITTED_NOW = "SELECT" + _COMMITTED.removeprefix(",")
_TRACKED = {
    "apply": "SELECT w.*" + _COMMITTED + " FROM {s}.__agents_apply(%s::text, %s::bigint,"
    " %s::jsonb, %s::jsonb) w",
    "create": "SELECT w" + _COMMITTED + " FROM {s}.__agents_create(%s::text, %s::bigint,"
    " %s::text, %s::timestamptz, %s::text, %s::text, %s::bigint, %s::bigint) w",
    "delete": "SELECT w" + _COMMITTED + " FROM {s}.__agents_delete(%s::text) w",
}
_READS = frozenset({"snapshot", "list", "all", "scoped"})
_ERASE_SESSIONS = "SELECT count(*) FROM unnest(%s::text[]) AS x(id) WHERE {s}.__agents_delete(x.id)"
_ERASE_USER_MAP = "DELETE FROM {s}.__agents_scoped WHERE scope = 'user' AND owner = %s"


class PostgresEngine(Engine):
    """Sessions in the tables of ``schema``, reached through ``connections``."""

    system = "postgresql"

    def __init__(
        self,
        connections: Connections,
        schema: str,
        auto_migrate: bool,
        standby: Standby | None = None,
    ) -> None:
        self.connections = connections
        self.standby = standby
        self.schema = schema
        # Tracing's db.namespace: "<database>.<schema>", the database as libpq is told it.
        # (A pool built on a conninfo callable names none.)
        info = connections.pool.conninfo
        database = conninfo_to_dict(info).get("dbname") if isinstance(info, str) else None
        self.namespace = f"{database}.{schema}" if database else None
        self.needs_open = connections.owns_pool or standby is not None
        self.auto_migrate = auto_migrate
        quoted = sql.Identifier(schema).as_string()
        statements = _STATEMENTS if standby is None else {**_STATEMENTS, **_TRACKED}
        self._sql = {k: q.format(s=quoted).encode() for k, q in statements.items()}
        # A restore's statements share one transaction, whose id and position are read once.
        self._plain = {k: _STATEMENTS[k].format(s=quoted).encode() for k in ("create", "apply")}
        self._erase = (
            _ERASE_SESSIONS.format(s=quoted).encode(),
            _ERASE_USER_MAP.format(s=quoted).encode(),
        )
        self._dumps = Dumps(schema)

    async def open(self) -> None:
        """Connect, then migrate (``auto_migrate``) or check the schema; closed on failure."""
        try:
            await self.connections.open()
            if self.auto_migrate:
                await self.migrate()
            else:
                await self.check_schema()
            if self.standby is not None:
                await self.standby.connections.open()
        except BaseException as exc:
            await self.close()
            if isinstance(exc, psycopg.Error):
                raise self.connections.wrap(exc, "opening the store", None, False, True) from exc
            raise

    async def close(self) -> None:
        """Close the pools the store opened."""
        try:
            await self.connections.close()
        finally:
            if self.standby is not None:
                await self.standby.connections.close()

    async def migrate(self) -> None:
        """Apply the pending migrations (an advisory lock serialises processes)."""
        await self.connections.on_connection(
            "migrate", lambda conn: migrate(conn, self.schema), True
        )

    async def pending_migrations(self) -> list[str]:
        """The migrations the schema lacks; connects first when the store is not open."""
        if self.needs_open and self.connections.pool.closed:
            await self.connections.open()
        return await self.connections.on_connection(
            "migrations", lambda conn: pending_migrations(conn, self.schema), False
        )

    async def check_schema(self) -> None:
        """Raise :class:`MigrationError` unless the schema has every migration, unchanged."""
        schema = self.schema

        async def read(conn: AsyncConnection[Any]) -> list[tuple[int, str, str]]:
            async with conn.cursor(row_factory=tuple_row) as cur:
                return await read_applied(cur, schema)

        lacking = check_applied(schema, await self.connections.on_connection("check", read, False))
        if lacking:
            raise MigrationError(
                f"schema {schema!r} lacks migrations {', '.join(m.name for m in lacking)}: "
                f"run `await store.migrate()` or open the store with auto_migrate=True"
            )

    async def _rows(
        self, name: str, params: Sequence[Any], session_id: str | None, write: bool = False
    ) -> list[Row]:
        standby = self.standby
        if standby is None:
            return await self.connections.rows(self._sql[name], params, name, session_id, write)
        if name in _READS:
            return await standby.rows(self._sql[name], params, name, session_id)
        rows = await self.connections.rows(self._sql[name], params, name, session_id, write)
        if name in _TRACKED:
            *head, xid, position = rows[0]
            standby.note(session_id or "", xid, position)
            rows = [tuple(head)]
        return rows

    async def snapshot(self, session_id: str, want: Want) -> Snapshot | None:
        """One call of ``__agents_snapshot``."""
        (row,) = await self._rows("snapshot", (session_id, want_json(want)), session_id)
        return snapshot(session_id, row, want.queued)

    async def apply(
        self, session_id: str, version: int, changes: Changes, want: Want
    ) -> Refused | Snapshot:
        """One call of ``__agents_apply``: the new head, or the refusal with the snapshot."""
        params = (session_id, version, changes_json(changes), want_json(want))
        (row,) = await self._rows("apply", params, session_id, write=True)
        found = snapshot(session_id, row, want.queued if row[0] else None)
        return found if found is not None and not row[0] else Refused(found)

    async def create(self, new: NewSession) -> Literal["created", "exists"] | Refused:
        """One call of ``__agents_create``."""
        source, version, end = new.clone_of or (None, None, None)
        params = (
            new.session_id,
            new.version,
            new.user_id,
            new.created_at,
            json.dumps(new.metadata),
            source,
            version,
            end,
        )
        ((done,),) = await self._rows("create", params, new.session_id, write=True)
        if done in ("created", "exists"):
            return "created" if done == "created" else "exists"
        if done == "gone" or source is None:
            return Refused(None)
        return Refused(snapshot(source, (None, done, *[None] * 15), None))

    async def restore(
        self, new: NewSession, plans: Sequence[Changes]
    ) -> Literal["created", "exists"]:
        """``__agents_create`` and one ``__agents_apply`` per plan, in one transaction
        (docs/export.md, EXP-11)."""
        sid = new.session_id
        created = (sid, new.version, new.user_id, new.created_at, json.dumps(new.metadata))
        head = want_json(Want())

        async def work(conn: AsyncConnection[Any]) -> Literal["created", "exists"]:
            committed: Row | None = None
            async with conn.transaction(), conn.cursor(row_factory=tuple_row) as cur:
                await cur.execute(self._plain["create"], (*created, None, None, None))
                if (await cur.fetchone()) != ("created",):
                    return "exists"
                for version, changes in enumerate(plans, new.version):
                    params = (sid, version, changes_json(changes), head)
                    await cur.execute(self._plain["apply"], params)
                    row = await cur.fetchone()
                    if row is None or row[0]:
                        raise ConcurrencyConflictError(
                            f"session {sid!r}: moved inside its own import's transaction",
                            session_id=sid,
                        )
                if self.standby is not None:
                    await cur.execute(_COMMITTED_NOW)
                    committed = await cur.fetchone()
            if self.standby is not None and committed is not None:  # noted once committed
                self.standby.note(sid, *committed)
            return "created"

        return await self.connections.on_connection("restore", work, True)

    async def delete(self, session_id: str) -> bool:
        """One call of ``__agents_delete``."""
        ((found,),) = await self._rows("delete", (session_id,), session_id, write=True)
        return bool(found)

    async def erase_user(self, user_id: str, session_ids: Sequence[str]) -> None:
        """``__agents_delete`` of each session (in id order, so two erasures cannot
        deadlock) and the user's map, in one transaction."""
        sessions, user_map = self._erase

        async def work(conn: AsyncConnection[Any]) -> None:
            committed: Row | None = None
            async with conn.transaction(), conn.cursor(row_factory=tuple_row) as cur:
                await cur.execute(sessions, (sorted(session_ids),))
                await cur.execute(user_map, (user_id,))
                if self.standby is not None:
                    await cur.execute(_COMMITTED_NOW)
                    committed = await cur.fetchone()
            if self.standby is not None and committed is not None:
                for session_id in session_ids:
                    self.standby.note(session_id, *committed)

        await self.connections.on_connection("erase", work, True)

    async def list_sessions(
        self, user_id: str, after: tuple[datetime, str] | None, limit: int
    ) -> Sequence[SessionSummary]:
        """One indexed SELECT of the user's sessions, newest activity first."""
        at, sid = after or (None, None)
        rows = await self._rows("list", (user_id, at, at, at, sid, limit), None)
        return [  # with the metadata: core decides expiry without a read of each
            ListedSession(
                id=session_id,
                user_id=user_id,
                created_at=created.astimezone(UTC),
                last_activity_at=last.astimezone(UTC),
                message_count=count,
                pending_approvals=pending,
                metadata=json.loads(metadata),
            )
            for session_id, created, last, count, pending, metadata in rows
        ]

    async def list_all(self, after_id: str | None, limit: int) -> Sequence[ListedSession]:
        """One range of the primary key (``COLLATE "C"``: code point order)."""
        rows = await self._rows("all", (after_id or "", limit), None)
        return [
            ListedSession(
                id=session_id,
                user_id=user_id,
                created_at=created.astimezone(UTC),
                last_activity_at=last.astimezone(UTC),
                message_count=count,
                pending_approvals=pending,
                metadata=json.loads(metadata),
            )
            for session_id, user_id, created, last, count, pending, metadata in rows
        ]

    async def scoped_state(self, scope: str, owner: str) -> JsonObject:
        """The app or user map, one SELECT."""
        ((text,),) = await self._rows("scoped", (scope, owner), None)
        return {key: json.loads(value) for key, value in json.loads(text).items()}

    async def dump(self, session_id: str) -> SessionDump | None:
        """Every record of the session, in one read-only transaction (docs/export.md)."""
        return await self.connections.on_connection(
            "dump", lambda conn: self._dumps.dump(conn, session_id), False
        )

    async def scoped_maps(self) -> Sequence[tuple[str, str, JsonObject]]:
        """Every app and user map that holds a key, one SELECT (docs/export.md)."""
        return await self.connections.on_connection("scoped_maps", self._dumps.scoped_maps, False)
