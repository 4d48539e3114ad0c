"""``JsonDocumentStore``: a complete minimal backend, one JSON document per session.

The storage is any ``MutableMapping[str, str]`` from session id to JSON text (a
plain ``dict`` here; a key-value database would do). Every rule comes from
core: this module only loads a document, asks core what to check and write,
and saves the document back. See docs/backends/writing.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Self

from helix_agents.core import (
    CommitResult,
    JsonObject,
    Message,
    MessageCommit,
    MessagePage,
    PageOrder,
    RunStatus,
    Scope,
    SessionExistsError,
    SessionInfo,
    SessionsPage,
    SessionSummary,
    StoreUnavailableError,
)
from helix_agents.core.backend import (
    ClosesOnExit,
    SessionHandles,
    assert_fence,
    check_commit,
    check_finish_status,
    check_id,
    check_keep,
    check_limit,
    check_listing_first,
    check_max_messages,
    check_new_session,
    check_pop_count,
    check_scope,
    check_tail_limit,
    coerce,
    decode_sessions_cursor,
    encode_sessions_cursor,
    new_session_id,
    next_activity,
    page_rows,
    parse_message_json,
    plan_replace,
    pop_keep,
    session_not_found,
    utcnow,
)

from ._context import ContextMethods
from ._document import ContextDoc, SessionDoc
from ._records import RecordMethods

__all__ = ["JsonDocumentStore"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class JsonDocumentStore(ContextMethods, RecordMethods, SessionHandles, ClosesOnExit):
    """Sessions as JSON documents in ``documents``, app and user state maps in ``shared``;
    stores given the same mappings share them.

    A write loads the document, checks, and saves it without awaiting in between,
    so on one event loop it is atomic. A backend on a real database does the same
    inside one transaction (or a compare-and-set on the document's version).
    """

    def __init__(
        self,
        documents: MutableMapping[str, str],
        shared: MutableMapping[str, str] | None = None,
        *,
        max_messages: int | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        if max_messages is not None:
            check_max_messages(max_messages)
        self.documents = documents
        self.shared = {} if shared is None else shared
        self.max_messages = max_messages
        self._clock = clock
        self._closed = False

    async def __aenter__(self) -> Self:
        self._check_open()
        return self

    async def close(self) -> None:
        """Later calls raise :class:`StoreUnavailableError`."""
        self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise StoreUnavailableError("the JSON document store is closed")

    def _load(self, session_id: str) -> SessionDoc:
        self._check_open()
        check_id(session_id, "session_id")
        text = self.documents.get(session_id)
        if text is None:
            raise session_not_found(session_id)
        return SessionDoc.model_validate_json(text)

    @contextmanager
    def _write(self, session_id: str) -> Iterator[SessionDoc]:
        """The session's document, saved after the block; an error saves nothing."""
        doc = self._load(session_id)
        yield doc
        self.documents[session_id] = doc.dump()

    def _touch(self, doc: SessionDoc) -> None:
        doc.last_activity_at = next_activity(doc.last_activity_at, self._clock())

    def _insert(self, doc: SessionDoc) -> SessionInfo:
        if doc.id in self.documents:
            raise SessionExistsError(f"session {doc.id!r} exists", session_id=doc.id)
        self.documents[doc.id] = doc.dump()
        return _info(doc)

    # Sessions

    async def create_session(
        self,
        session_id: str | None = None,
        *,
        user_id: str | None = None,
        metadata: JsonObject | None = None,
    ) -> SessionInfo:
        """Create a session; mint a unique id when none is given."""
        self._check_open()
        sid, meta = check_new_session(session_id, user_id, metadata)
        now = self._clock()
        return self._insert(
            SessionDoc(id=sid, user_id=user_id, created_at=now, last_activity_at=now, metadata=meta)
        )

    async def get_session(self, session_id: str) -> SessionInfo | None:
        """The session, or ``None``."""
        self._check_open()
        check_id(session_id, "session_id")
        text = self.documents.get(session_id)
        return None if text is None else _info(SessionDoc.model_validate_json(text))

    async def delete_session(self, session_id: str) -> bool:
        """Delete the session and everything it holds."""
        self._check_open()
        check_id(session_id, "session_id")
        return self.documents.pop(session_id, None) is not None

    async def clear_session(self, session_id: str) -> None:
        """Drop rows and queues; keep the session, its user and metadata; cancel a live run."""
        with self._write(session_id) as doc:
            doc.rows.clear()
            doc.first_index = doc.dropped_ui = 0
            for table in (doc.items, doc.late, doc.approvals, doc.checkpoints, doc.commits):
                table.clear()
            doc.resolved.clear()
            doc.scoped = {}
            doc.context = ContextDoc()
            run = doc.current_run
            if run is not None and run.status == "live":
                doc.current_run = run.model_copy(
                    update={"status": "cancelled", "ended_at": self._clock()}
                )
            self._touch(doc)

    async def clone_session(
        self, source_id: str, target_id: str | None = None, *, up_to: int | None = None
    ) -> SessionInfo:
        """Copy rows ``[0, up_to)`` and the checkpoints in range into a new session."""
        src = self._load(source_id)
        end = src.message_count if up_to is None else up_to
        check_limit(source_id, "up_to", end, src.first_index, src.message_count)
        target = new_session_id(target_id, "target_id")
        now = self._clock()
        return self._insert(
            SessionDoc(
                id=target,
                user_id=src.user_id,
                created_at=now,
                last_activity_at=now,
                metadata=src.metadata,
                rows=src.rows[: end - src.first_index],
                first_index=src.first_index,
                dropped_ui=src.dropped_ui,
                checkpoints={
                    cid: cp for cid, cp in src.checkpoints.items() if cp.message_count <= end
                },
            )
        )

    async def list_sessions(
        self, user_id: str, *, first: int = 20, cursor: str | None = None
    ) -> SessionsPage:
        """A user's sessions, most recent activity first, ties by id.

        This reads every document: fine for an example; a real backend keeps an index.
        """
        self._check_open()
        check_id(user_id, "user_id")
        check_listing_first(first)
        after = None if cursor is None else _order(*decode_sessions_cursor(user_id, cursor))
        docs = [SessionDoc.model_validate_json(text) for text in self.documents.values()]
        mine = sorted(
            (d for d in docs if d.user_id == user_id),
            key=lambda d: _order(d.last_activity_at, d.id),
        )
        page = [
            _summary(d) for d in mine if after is None or _order(d.last_activity_at, d.id) > after
        ]
        next_cursor = None
        if len(page) > first:
            del page[first:]
            next_cursor = encode_sessions_cursor(user_id, page[-1].last_activity_at, page[-1].id)
        return SessionsPage(sessions=tuple(page), next_cursor=next_cursor)

    # Rows

    async def append_messages(self, session_id: str, commit: MessageCommit) -> CommitResult:
        """Append rows with the checks and deliveries of the commit, atomically."""
        with self._write(session_id) as doc:
            commit = coerce(MessageCommit, commit, session_id)
            outcome = check_commit(session_id, commit, doc.commit_state(commit))
            if isinstance(outcome, CommitResult):
                return outcome  # a replayed commit id: nothing changes
            doc.apply(outcome, commit.commit_id, self._clock())
            doc.retain(self.max_messages)
            self._touch(doc)
            # App and user maps live outside the document; no await since the load keeps
            # this atomic with the rows.
            for (scope, owner), changes in outcome.scoped_state.items():
                if scope != "session":
                    key = json.dumps([scope, owner])
                    merged = {**json.loads(self.shared.get(key, "{}")), **changes}
                    self.shared[key] = json.dumps(merged)
            return outcome.result

    async def get_scoped_state(self, scope: Scope, owner: str) -> JsonObject:
        """The ``(scope, owner)`` map (``{}`` if never written); a ``session`` owner must exist."""
        self._check_open()
        check_scope(None, scope, owner)
        if scope == "session":
            return self._load(owner).scoped
        loaded: JsonObject = json.loads(self.shared.get(json.dumps([scope, owner]), "{}"))
        return loaded

    async def get_messages(self, session_id: str, *, limit: int | None = None) -> list[Message]:
        """Rows oldest first; ``limit`` keeps the last N."""
        doc = self._load(session_id)
        if limit is not None:
            check_tail_limit(session_id, limit)
        rows = doc.rows if limit is None else doc.rows[-limit:] if limit else []
        return [parse_message_json(row) for row in rows]

    async def get_message_count(self, session_id: str) -> int:
        """All rows, context rows included."""
        return self._load(session_id).message_count

    async def get_ui_message_count(self, session_id: str) -> int:
        """Rows that are not context rows."""
        return self._load(session_id).ui_count()

    async def page_messages(
        self,
        session_id: str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        order: PageOrder = "asc",
    ) -> MessagePage:
        """A page of rows in ``order``; ``next_cursor`` is ``None`` at the end."""
        doc = self._load(session_id)
        parse = parse_message_json  # each row is stored as its JSON text
        return page_rows(
            session_id, doc.rows, doc.first_index, parse, limit=limit, cursor=cursor, order=order
        )

    async def truncate_messages(
        self, session_id: str, keep: int, *, fence_run_id: str | None = None
    ) -> None:
        """Drop rows at index >= ``keep``, re-opening the items they delivered."""
        with self._write(session_id) as doc:
            check_keep(session_id, keep, doc.message_count)
            assert_fence(session_id, fence_run_id, doc.current_run)
            doc.cut(keep)
            self._touch(doc)

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        """Remove the newest ``count`` rows atomically and return them, oldest first."""
        with self._write(session_id) as doc:
            check_pop_count(session_id, count, fence_run_id)
            assert_fence(session_id, fence_run_id, doc.current_run)
            keep = pop_keep(count, doc.first_index, doc.message_count)
            if keep == doc.message_count:
                return []
            popped = [parse_message_json(row) for row in doc.rows[keep - doc.first_index :]]
            doc.cut(keep)
            self._touch(doc)
            return popped

    async def replace_messages(
        self,
        session_id: str,
        keep: int,
        messages: Sequence[Message],
        *,
        expect_message_count: int,
        fence_run_id: str | None = None,
    ) -> CommitResult:
        """If the log still holds ``expect_message_count`` rows, cut it to ``keep`` rows and
        append ``messages``, atomically."""
        with self._write(session_id) as doc:
            plan = plan_replace(  # every check, then: cut to keep, append the rows
                session_id,
                keep,
                messages,
                expect_message_count,
                fence_run_id,
                message_count=doc.message_count,
                first_index=doc.first_index,
                current_run=doc.current_run,
            )
            doc.apply(plan, None, self._clock())
            doc.retain(self.max_messages)
            self._touch(doc)
            return plan.result

    async def is_truncated(self, session_id: str) -> bool:
        """Whether retention has dropped old rows."""
        return self._load(session_id).first_index > 0

    # Runs

    async def finish_run(self, session_id: str, run_id: str, status: RunStatus) -> None:
        """End the current live run with ``status``."""
        with self._write(session_id) as doc:
            check_id(run_id, "run_id", session_id=session_id)
            check_finish_status(session_id, status)
            assert_fence(session_id, run_id, doc.current_run)
            assert doc.current_run is not None
            doc.current_run = doc.current_run.model_copy(
                update={"status": status, "ended_at": self._clock()}
            )
            self._touch(doc)


def _order(at: datetime, session_id: str) -> tuple[timedelta, str]:
    # Ascending order of this key is the listing order: newest activity first, ties by id.
    return (_EPOCH - at, session_id)


def _info(doc: SessionDoc) -> SessionInfo:
    return SessionInfo(
        id=doc.id,
        user_id=doc.user_id,
        created_at=doc.created_at,
        last_activity_at=doc.last_activity_at,
        message_count=doc.message_count,
        current_run=doc.current_run,
        metadata=doc.metadata,
    )


def _summary(doc: SessionDoc) -> SessionSummary:
    return SessionSummary(
        id=doc.id,
        created_at=doc.created_at,
        last_activity_at=doc.last_activity_at,
        message_count=doc.message_count,
        pending_approvals=len(doc.approvals),
    )
