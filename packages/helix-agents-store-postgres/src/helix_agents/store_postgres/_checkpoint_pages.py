"""Paged checkpoint reads and deletes of the Postgres store (CKP-3..CKP-6).

Both are one statement. A page is one range scan of the primary key
``(session_id, checkpoint_id)``, whose ``COLLATE "C"`` is the code point order
of core's :class:`~helix_agents.core.CheckpointRange`; a delete locks the
session row, deletes, and moves the activity time if anything went.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from psycopg import sql

from helix_agents.core import Checkpoint
from helix_agents.core.backend import check_checkpoint_ids, checkpoint_range
from helix_agents.core.errors import session_not_found

from . import _json
from ._base import StoreBase

__all__ = ["CheckpointPagesMixin"]

_PAGE = (
    "SELECT c.body::text FROM {s}.__agents_sessions x"
    " LEFT JOIN LATERAL (SELECT checkpoint_id, body FROM {s}.__agents_checkpoints"
    "  WHERE session_id = x.session_id AND checkpoint_id >= %s::text {high}"
    "  ORDER BY checkpoint_id DESC LIMIT %s) c ON true"
    " WHERE x.session_id = %s ORDER BY c.checkpoint_id DESC"
)
_DELETE = (
    "WITH s AS (SELECT session_id FROM {s}.__agents_sessions WHERE session_id = %s FOR UPDATE),"
    " d AS (DELETE FROM {s}.__agents_checkpoints c USING s"
    "  WHERE c.session_id = s.session_id AND c.checkpoint_id = ANY(%s::text[]) RETURNING 1),"
    " u AS (UPDATE {s}.__agents_sessions x"
    "  SET last_activity_at = {s}.__agents_next_activity(x.last_activity_at, %s)"
    "  FROM s WHERE x.session_id = s.session_id AND EXISTS (SELECT FROM d) RETURNING 1)"
    " SELECT (SELECT count(*) FROM s), (SELECT count(*) FROM d), (SELECT count(*) FROM u)"
)


@cache
def _render(template: str, schema: str) -> bytes:
    return template.replace("{s}", sql.Identifier(schema).as_string(None)).encode()


class CheckpointPagesMixin(StoreBase):
    """``page_checkpoints`` and ``delete_checkpoints``."""

    async def page_checkpoints(
        self,
        session_id: str,
        *,
        prefix: str = "",
        before: str | None = None,
        limit: int = 50,
    ) -> list[Checkpoint]:
        """Up to ``limit`` checkpoints under ``prefix`` and below ``before``, greatest id first."""
        where = await self._checked(
            session_id,
            "page_checkpoints",
            lambda: checkpoint_range(session_id, prefix, before, limit),
        )
        if where.empty:
            await self._counts(session_id, "page_checkpoints")
            return []
        if where.high is None:
            query = _render(_PAGE.replace("{high}", ""), self.schema)
            params: tuple[object, ...] = (where.low, where.limit, session_id)
        else:
            query = _render(_PAGE.replace("{high}", "AND checkpoint_id < %s::text"), self.schema)
            params = (where.low, where.high, where.limit, session_id)
        rows = await self._session_rows(query, params, session_id, "page_checkpoints")
        return [
            Checkpoint.model_validate(_json.loads(body)) for (body,) in rows if body is not None
        ]

    async def delete_checkpoints(self, session_id: str, checkpoint_ids: Sequence[str]) -> int:
        """Delete the named checkpoints (unknown ids are skipped); how many were deleted."""
        ids = await self._checked(
            session_id,
            "delete_checkpoints",
            lambda: check_checkpoint_ids(session_id, checkpoint_ids),
        )
        rows = await self._rows(
            _render(_DELETE, self.schema),
            (session_id, ids, self._clock()),
            what="delete_checkpoints",
            session_id=session_id,
            write=True,
        )
        found, gone, _ = rows[0]
        if not found:
            raise session_not_found(session_id)
        return int(gone)
