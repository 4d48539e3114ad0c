"""``PostgresStateStore``: the rows and runs, and the class that assembles the store."""

from __future__ import annotations

import json
from typing import Any

from helix_agents.core import (
    CommitResult,
    JsonObject,
    Message,
    MessageCommit,
    MessagePage,
    ValidationError,
)
from helix_agents.core.backend import (
    CommitState,
    SessionHandles,
    assert_fence,
    check_commit,
    check_finish_status,
    check_id,
    check_keep,
    check_scope,
    check_scoped_deltas,
    coerce_commit,
    merge_deltas,
)
from helix_agents.core.limits import (
    MAX_COUNT,
    check_page_args,
    check_tail_limit,
    next_page_cursor,
    page_window,
)
from helix_agents.core.models import PageOrder, RunStatus, Scope

from . import _json
from ._base import big
from ._checkpoint_pages import CheckpointPagesMixin
from ._config import POOL_OPTIONS, STORE_OPTIONS, PoolSettings, split_url
from ._context import ContextMixin
from ._edits import EditsMixin
from ._queues import QueuesMixin
from ._refusals import RefusalDoc, Snapshot, assert_retained, refuse
from ._sessions import SessionsMixin

__all__ = ["PostgresStateStore", "open_url"]


class PostgresStateStore(
    SessionsMixin, QueuesMixin, EditsMixin, CheckpointPagesMixin, ContextMixin, SessionHandles
):
    """Session state in PostgreSQL (psycopg 3 async, psycopg_pool).

    Build it from a conninfo/URL (the store opens and closes its own pool,
    sized by ``pool_settings``) or from an application's ``pool`` (left open
    on :meth:`close`). Tables live in ``schema``; open the store with
    ``auto_migrate=True`` or call :meth:`migrate` once per deployment.
    ``max_messages`` keeps the newest N rows of each session. Each operation
    ends within ``operation_timeout`` seconds, waiting for a connection
    included, or raises :class:`~helix_agents.core.StoreUnavailableError`.
    ``prepare`` (``auto``, ``on``, ``off``) says whether the store's statements
    are prepared on the server (psycopg's ``execute(prepare=True)``): ``auto`` on
    the store's own pool only, ``on`` on an application's pool too (unless its
    ``prepare_threshold`` is ``None``); behind PgBouncer before 1.21 in
    transaction mode, ``off``.
    """

    # Rows

    async def append_messages(self, session_id: str, commit: MessageCommit) -> CommitResult:
        """Append rows with the checks and deliveries of the commit: ONE round trip.

        The server-side function ``__agents_commit`` runs the checks of docs/commit.md in
        order under the session row lock and writes the rows, deliveries, run
        start and commit id in the same transaction.
        """
        commit, texts = await self._checked(
            session_id, "append_messages", lambda: _checked_commit(session_id, commit)
        )
        start = commit.start_run
        n = len(commit.messages)
        envelope = {
            "run": None if start is None else start.run_id,
            "rewind": None if start is None or start.rewind_to is None else big(start.rewind_to),
            "fence": commit.fence_run_id,
            "expect": None
            if commit.expect_message_count is None
            else big(commit.expect_message_count),
            # An offset out of range only has to be seen as such; it may not fit a bigint.
            "ci": [
                [d.key, d.row_offset if 0 <= d.row_offset < n else -1]
                for d in commit.deliver_context_items
            ],
            "la": [
                [d.call_id, d.row_offset if 0 <= d.row_offset < n else -1]
                for d in commit.deliver_late_answers
            ],
            "id": commit.commit_id,
        }
        rows = _json.dump_rows(commit.messages, texts)
        deltas = [
            [scope, owner, key, value]
            for (scope, owner), changes in merge_deltas(session_id, commit.scoped_state).items()
            for key, value in changes.items()
        ]
        params = (session_id, rows, json.dumps(envelope), self._clock(), self.max_messages)
        doc = await self._call(
            self._sql.commit if deltas else self._sql.commit_plain,
            (*params, _json.dumps(deltas)) if deltas else params,
            what="append_messages",
            session_id=session_id,
        )
        if "refused" in doc:
            refusal: RefusalDoc = doc

            def core_checks(snap: Snapshot) -> None:
                check_commit(
                    session_id,
                    commit,
                    CommitState(
                        message_count=snap.message_count,
                        current_run=snap.current_run,
                        run_id_used=lambda _: refusal["run_used"],
                        context_items=refusal["ci"],
                        late_answers=refusal["la"],
                    ),
                )

            def retained(snap: Snapshot) -> None:
                if start is not None and start.rewind_to is not None:
                    assert_retained(session_id, start.rewind_to, snap)

            refuse(session_id, refusal, core_checks, retained)
        return CommitResult.model_validate(doc)

    async def get_scoped_state(self, scope: Scope, owner: str) -> JsonObject:
        """The ``(scope, owner)`` map (``{}`` if never written); a ``session`` owner must exist."""
        self._ensure_open("get_scoped_state", None)
        check_scope(None, scope, owner)
        if scope == "session":
            rows = await self._session_rows(
                self._sql.session_state, (owner,), owner, "get_scoped_state"
            )
        else:
            rows = await self._rows(
                self._sql.scoped_state, (scope, owner), what="get_scoped_state", session_id=None
            )
        found: JsonObject = _json.loads(rows[0][0])
        return found

    async def get_messages(self, session_id: str, *, limit: int | None = None) -> list[Message]:
        """Rows oldest first; ``limit`` keeps the last N."""
        self._open_session("get_messages", session_id)
        if limit is not None:
            await self._checked(
                session_id,
                "get_messages",
                lambda: check_tail_limit(session_id, limit),
            )
        if self._preparing:
            rows = await self._session_rows(
                self._sql.messages_prepared, (limit, session_id), session_id, "get_messages"
            )
        else:
            rows = await self._session_rows(
                self._sql.messages, (session_id, limit), session_id, "get_messages"
            )
        return _json.parse_rows([body for (body,) in rows if body is not None])

    async def get_message_count(self, session_id: str) -> int:
        """All rows, context rows included."""
        self._open_session("get_message_count", session_id)
        count, _, _ = await self._counts(session_id, "get_message_count")
        return count

    async def get_ui_message_count(self, session_id: str) -> int:
        """Rows that are not context rows (those dropped by retention included)."""
        self._open_session("get_ui_message_count", session_id)
        _, ui, _ = await self._counts(session_id, "get_ui_message_count")
        return ui

    async def page_messages(
        self,
        session_id: str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        order: PageOrder = "asc",
    ) -> MessagePage:
        """A page of rows in ``order``; ``next_cursor`` is ``None`` at the end."""
        start = await self._checked(
            session_id, "page_messages", lambda: check_page_args(session_id, limit, cursor, order)
        )
        if order == "asc":
            params: tuple[Any, ...] = (big(start or 0), limit, session_id)
            rows = await self._session_rows(self._sql.page_asc, params, session_id, "page_messages")
        else:
            params = (big(start) if start is not None else MAX_COUNT, limit, session_id)
            rows = await self._session_rows(
                self._sql.page_desc, params, session_id, "page_messages"
            )
        first, count = int(rows[0][0]), int(rows[0][1])
        page = tuple(_json.parse_row(body) for _, _, body in rows if body is not None)
        lo, hi = page_window(order, start, limit, first, count)
        next_cursor = next_page_cursor(session_id, order, lo, hi, first, count)
        return MessagePage(messages=page, next_cursor=next_cursor)

    async def truncate_messages(
        self, session_id: str, keep: int, *, fence_run_id: str | None = None
    ) -> None:
        """Drop rows at index >= ``keep``, re-opening the items they delivered."""
        await self._checked(
            session_id,
            "truncate_messages",
            lambda: check_id(fence_run_id, "fence_run_id", session_id=session_id, optional=True),
        )
        if isinstance(keep, bool) or not isinstance(keep, int):
            count, _, _ = await self._counts(session_id, "truncate_messages")
            check_keep(session_id, keep, count)
        doc = await self._call(
            self._sql.truncate,
            (session_id, max(-1, big(keep)), fence_run_id, self._clock()),
            what="truncate_messages",
            session_id=session_id,
        )
        if "refused" in doc:
            refuse(
                session_id,
                doc,
                lambda snap: check_keep(session_id, keep, snap.message_count),
                lambda snap: assert_fence(session_id, fence_run_id, snap.current_run),
                lambda snap: assert_retained(session_id, keep, snap),
            )

    async def is_truncated(self, session_id: str) -> bool:
        """Whether retention has dropped old rows."""
        self._open_session("is_truncated", session_id)
        _, _, first = await self._counts(session_id, "is_truncated")
        return first > 0

    # Runs

    async def finish_run(self, session_id: str, run_id: str, status: RunStatus) -> None:
        """End the current live run with ``status``."""
        await self._checked(
            session_id, "finish_run", lambda: check_id(run_id, "run_id", session_id=session_id)
        )
        doc = await self._call(
            self._sql.finish_run,
            (session_id, run_id, status if isinstance(status, str) else "", self._clock()),
            what="finish_run",
            session_id=session_id,
        )
        if "refused" in doc:
            refuse(
                session_id,
                doc,
                lambda _: check_finish_status(session_id, status),
                lambda snap: assert_fence(session_id, run_id, snap.current_run),
            )


def open_url(url: str, *, namespace: str | None = None, **options: Any) -> PostgresStateStore:
    """The ``postgresql://`` / ``postgres://`` entry point; ``namespace`` is the schema.

    Store options come as keywords or as URL query parameters (``?max_size=20``);
    see :func:`~helix_agents.store_postgres._config.split_url`. An unknown
    keyword is a :class:`ValidationError`.
    """
    conninfo, from_url = split_url(url)
    unknown = sorted(set(options) - POOL_OPTIONS - STORE_OPTIONS)
    if unknown:
        known = ", ".join(sorted(POOL_OPTIONS | STORE_OPTIONS | {"namespace"}))
        raise ValidationError(
            f"unknown option {unknown[0]!r} for a PostgreSQL store; known: {known}"
        )
    merged = {**from_url, **options}
    pool = {k: merged.pop(k) for k in list(merged) if k in POOL_OPTIONS}
    if namespace is not None:
        merged["schema"] = namespace
    return PostgresStateStore(conninfo, pool_settings=PoolSettings(**pool), **merged)


def _checked_commit(session_id: str, commit: object) -> tuple[MessageCommit, list[str] | None]:
    """The commit, checked storable, with well-formed scoped-state deltas; and its rows'
    JSON when core wrote it in the same walk (:func:`coerce_commit`)."""
    checked, texts = coerce_commit(commit, session_id)
    check_scoped_deltas(session_id, checked.scoped_state)
    return checked, texts
