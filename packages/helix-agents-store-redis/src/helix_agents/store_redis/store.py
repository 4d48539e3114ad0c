"""``RedisStateStore``: sessions on Redis or Redis Cluster, every write one Lua script."""

from __future__ import annotations

from typing import Any

from helix_agents.core import (
    CommitResult,
    Message,
    MessageCommit,
    MessagePage,
    StoreUnavailableError,
    ValidationError,
)
from helix_agents.core.backend import (
    SessionHandles,
    check_finish_status,
    check_id,
    check_keep,
    check_scoped_deltas,
    coerce,
    merge_deltas,
)
from helix_agents.core.errors import session_not_found
from helix_agents.core.limits import check_page_args, check_tail_limit
from helix_agents.core.models import PageOrder, RunStatus

from ._checkpoint_pages import CheckpointPagesMixin
from ._codec import pack_row, text, unpack_rows
from ._context import ContextMixin
from ._edits import EditsMixin
from ._errors import DRIVER_ERRORS, Refusal, driver_error, raise_commit_refusal
from ._listing import ListingMixin
from ._page import read_page
from ._records import RecordsMixin
from ._schema import APPEND, APPEND_KEYS, COMMIT, COMMIT_REPLY, TRUNCATE, joined_reply
from ._scoped import ScopedMixin, flat_pairs, journal_entry
from ._sessions import SessionsMixin

__all__ = ["RedisStateStore", "open_url"]

# The keys the row reads are given.
_ROWS = ("meta", "rows")
# A commit refused because a reader sealed its maps announces itself again; readers
# seal only maps without pending entries, so a few rounds always suffice.
_SEALED_RETRIES = 8


class RedisStateStore(
    SessionsMixin,
    RecordsMixin,
    ListingMixin,
    EditsMixin,
    CheckpointPagesMixin,
    ContextMixin,
    ScopedMixin,
    SessionHandles,
):
    """Session state in Redis (standalone, or a Redis Cluster), through ``redis.asyncio``.

    Build it from a URL (``redis://``, ``rediss://``, ``redis+cluster://h:p,h:p``;
    the store then owns and closes its client) or around a ``client`` you own.
    Options: ``key_prefix`` and ``namespace`` (keys live under
    ``<key_prefix>:<namespace>:``), ``idle_ttl`` (seconds or a timedelta: a
    session untouched that long expires whole), ``max_messages`` (retention),
    ``operation_timeout`` and ``connect_timeout`` (seconds), ``clock``; the
    store's options may also be URL query arguments (keywords win); any other
    keyword goes to the redis-py client.
    """

    # Rows

    async def append_messages(self, session_id: str, commit: MessageCommit) -> CommitResult:
        """Append rows with the checks and deliveries of the commit, in one script."""
        self._open_session(session_id)
        try:
            commit = coerce(MessageCommit, commit, session_id)
            rows = [pack_row(m, session_id) for m in commit.messages]
            check_scoped_deltas(session_id, commit.scoped_state)
        except ValidationError:
            await self._require(session_id)  # a missing session is reported first
            raise
        start = commit.start_run
        if (
            start is None
            and not commit.deliver_context_items
            and not commit.deliver_late_answers
            and not commit.scoped_state
            and not self.options.idle_ttl_ms
        ):
            reply = await self._append_plain(session_id, commit, rows)
            if reply != ["full"]:
                return await self._committed(session_id, commit, reply)
        ctx = [v for d in commit.deliver_context_items for v in (d.key, d.row_offset)]
        late = [v for d in commit.deliver_late_answers for v in (d.call_id, d.row_offset)]
        named = COMMIT.pack(
            has_cid=commit.commit_id is not None,
            starting=start is not None,
            rewind=-1 if start is None or start.rewind_to is None else start.rewind_to,
            fenced=commit.fence_run_id is not None,
            expect=-1 if commit.expect_message_count is None else commit.expect_message_count,
            max_messages=self.options.max_messages or 0,
            n=len(rows),
            n_ui=sum(m.role != "context" for m in commit.messages),
            n_ctx=len(ctx) // 2,
            n_late=len(late) // 2,
            cid=commit.commit_id or "",
            run_id="" if start is None else start.run_id,
            fence=commit.fence_run_id or "",
        )
        merged = merge_deltas(session_id, commit.scoped_state)
        own = flat_pairs(merged.get(("session", session_id), {}))
        shared = self._shared_changes(merged)
        tokens = await self._announce(session_id, shared) if shared else {}
        for _ in range(_SEALED_RETRIES):
            args = [
                *self._common(session_id),
                *named,
                *rows,
                *ctx,
                *late,
                len(own) // 2,
                *own,
                len(shared),
                *(v for pair in tokens.items() for v in pair),
                journal_entry(shared),
            ]
            reply = text(await self._run("commit", session_id, args, write=True, raw=True))
            if not (isinstance(reply, list) and reply[0] == "sealed"):
                break
            tokens = await self._announce(session_id, shared)
        else:
            raise StoreUnavailableError(
                f"session {session_id!r}: readers kept sealing the commit's maps; not written",
                session_id=session_id,
                may_have_landed=False,
            )
        result = await self._committed(session_id, commit, reply)
        if shared:
            await self._settle(session_id, tokens)
        return result

    async def _append_plain(self, session_id: str, commit: MessageCommit, rows: list[str]) -> Any:
        """The common append (lua/append.lua): its reply, which is ``['full']`` when the
        session needs lua/commit.lua after all (its keys carry a deadline)."""
        named = APPEND.pack(
            has_cid=commit.commit_id is not None,
            fenced=commit.fence_run_id is not None,
            expect=-1 if commit.expect_message_count is None else commit.expect_message_count,
            max_messages=self.options.max_messages or 0,
            n=len(rows),
            n_ui=sum(m.role != "context" for m in commit.messages),
            cid=commit.commit_id or "",
            fence=commit.fence_run_id or "",
        )
        args = [*self._common(session_id), *named, *rows]
        return text(
            await self._run("append", session_id, args, write=True, keys=APPEND_KEYS, raw=True)
        )

    async def _committed(self, session_id: str, commit: MessageCommit, reply: Any) -> CommitResult:
        """The result of a commit script's reply, or the error of its refusal."""
        if isinstance(reply, list):
            if reply[0] == "session_not_found":
                raise session_not_found(session_id)
            raise_commit_refusal(session_id, commit, reply)
        done = joined_reply(COMMIT_REPLY, reply)
        if self.cluster:  # standalone: the script moved the listing entry itself
            await self._relist(session_id, int(done["last_activity"]), done["user_key"])
        return CommitResult(
            first_index=int(done["first_index"]),
            message_count=int(done["message_count"]),
            replayed=int(done["replayed"]) == 1,
        )

    async def get_messages(self, session_id: str, *, limit: int | None = None) -> list[Message]:
        """Rows oldest first; ``limit`` keeps the last N."""
        self._open_session(session_id)
        if limit is not None:
            await self._checked(session_id, lambda: check_tail_limit(session_id, limit))
        # A Redis list holds fewer than 2^32 rows, and the script's numbers are doubles that
        # LRANGE refuses past 2^53: a larger limit asks for every row.
        tail = -1 if limit is None or limit >= 2**32 else limit
        reply = await self._run("r_tail", session_id, [tail], write=False, keys=_ROWS, raw=True)
        if reply is None:
            raise session_not_found(session_id)
        return unpack_rows(reply)

    async def _meta_field(self, session_id: str, field: str) -> int:
        client, _ = self._live()
        check_id(session_id, "session_id")
        try:
            value = await client.hget(self.options.keys.meta(session_id), field)
        except DRIVER_ERRORS as exc:
            raise driver_error(exc, session_id, write=False) from exc
        if value is None:
            raise session_not_found(session_id)
        return int(value)

    async def get_message_count(self, session_id: str) -> int:
        """All rows, context rows included."""
        return await self._meta_field(session_id, "count")

    async def get_ui_message_count(self, session_id: str) -> int:
        """Rows that are not context rows (those dropped by retention included)."""
        return await self._meta_field(session_id, "ui")

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
            session_id, lambda: check_page_args(session_id, limit, cursor, order)
        )
        reply = await self._run(
            "r_page",
            session_id,
            [order, -1 if start is None else start, limit],
            write=False,
            keys=_ROWS,
            raw=True,
        )
        if reply is None:
            raise session_not_found(session_id)
        return read_page(session_id, order, start, limit, reply)

    async def truncate_messages(
        self, session_id: str, keep: int, *, fence_run_id: str | None = None
    ) -> None:
        """Drop rows at index >= ``keep``, re-opening the items they delivered."""
        await self._checked(
            session_id,
            lambda: check_id(fence_run_id, "fence_run_id", session_id=session_id, optional=True),
        )
        if isinstance(keep, bool) or not isinstance(keep, int):
            await self._require(session_id)
            check_keep(session_id, keep, 0)
        reply = await self._run(
            "truncate",
            session_id,
            [
                *self._common(session_id),
                *TRUNCATE.pack(
                    keep=keep, fenced=fence_run_id is not None, fence=fence_run_id or ""
                ),
            ],
            write=True,
        )
        if reply[0] != "ok":
            Refusal.parse(reply).raise_error(session_id, fence_run_id=fence_run_id, keep=keep)
        await self._after(session_id, reply)

    async def is_truncated(self, session_id: str) -> bool:
        """Whether retention has dropped old rows."""
        return await self._meta_field(session_id, "first") > 0

    # Runs

    async def finish_run(self, session_id: str, run_id: str, status: RunStatus) -> None:
        """End the current live run with ``status``."""
        self._open_session(session_id)

        def check() -> None:
            check_id(run_id, "run_id", session_id=session_id)
            check_finish_status(session_id, status)

        await self._checked(session_id, check)
        reply = await self._run(
            "finish", session_id, [*self._common(session_id), run_id, status], write=True
        )
        if reply[0] != "ok":
            Refusal.parse(reply).raise_error(session_id, fence_run_id=run_id)
        await self._after(session_id, reply)


def open_url(url: str, *, namespace: str | None = None, **options: Any) -> RedisStateStore:
    """The entry point of ``redis://``, ``rediss://`` and ``redis+cluster://h:p,h:p`` URLs.

    The store's options may also come as URL query arguments; keyword options win.
    """
    return RedisStateStore(url, namespace=namespace, **options)
