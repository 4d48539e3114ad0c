"""The log: the commit, reads, pages and the three edits, once for every engine."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..edits import archived_by_replace, check_pop_count, plan_replace, pop_keep
from ..limits import check_page_args, check_tail_limit, next_page_cursor, page_window
from ..messages import Message
from ..models import CommitResult, MessageCommit, MessagePage, PageOrder, RunInfo, Usage
from ..rules import (
    CommitPlan,
    CommitState,
    assert_fence,
    assert_retained,
    check_commit,
    check_keep,
    coerce_commit,
)
from ..seam import Changes, Queue, RowSpan, Snapshot, Want
from ..sessiondoc import SessionDoc
from ..usage import check_usage, record_usage
from ._plumbing import Plumbing, row_message

__all__ = ["RowMethods"]

_HEAD = Want()


class RowMethods(Plumbing):
    """``append_messages`` and the rest of the log's methods."""

    async def append_messages(self, session_id: str, commit: MessageCommit) -> CommitResult:
        """Append rows with the checks and deliveries of the commit, atomically."""

        def checks() -> tuple[MessageCommit, list[str] | None, dict[str, Usage]]:
            checked, texts = coerce_commit(commit, session_id)
            return checked, texts, check_usage(session_id, checked.usage)

        commit, texts, usage = await self._checked(session_id, checks)
        start = commit.start_run
        want = Want(
            commit_id=commit.commit_id,
            run_id=None if start is None else start.run_id,
            queue_keys={
                "context": [d.key for d in commit.deliver_context_items],
                "late": [d.call_id for d in commit.deliver_late_answers],
            }
            if commit.deliver_context_items or commit.deliver_late_answers
            else {},
        )

        def plan(snap: Snapshot) -> tuple[Changes | None, CommitResult]:
            state = CommitState(
                message_count=snap.message_count,
                current_run=snap.current_run,
                run_id_used=lambda run_id: snap.run_id_used,
                context_items=snap.queue_state.get("context", {}),
                late_answers=snap.queue_state.get("late", {}),
                replay=snap.replay,
            )
            outcome = check_commit(session_id, commit, state)
            if isinstance(outcome, CommitResult):
                return None, outcome
            changes = self._commit_changes(snap, outcome, commit.commit_id, texts)
            if usage:  # added to the session's totals in the same write (USG-1)
                doc = SessionDoc(snap.metadata)
                record_usage(session_id, doc.own, usage)
                changes = dataclasses.replace(changes, metadata=doc.stored())
            return changes, outcome.result

        return await self._write(session_id, want, plan)

    def _commit_changes(
        self,
        snap: Snapshot,
        plan: CommitPlan,
        commit_id: str | None,
        texts: list[str] | None = None,
    ) -> Changes:
        """The changes of a checked commit (or replace), retention included; ``texts`` are
        the commit's rows as JSON, when the check made them."""
        if plan.rewind_to is not None:
            assert_retained(snap.session_id, plan.rewind_to, snap.first_index, snap.message_count)
        now = self._clock()
        run = (
            None
            if plan.run_id is None
            else RunInfo(run_id=plan.run_id, status="live", started_at=now)
        )
        deliveries: list[tuple[Queue, str, int]] = [
            ("context", k, i) for k, i in plan.context_deliveries
        ]
        deliveries += [("late", k, i) for k, i in plan.late_deliveries]
        count = plan.result.message_count
        return Changes(
            activity=self._activity(snap),
            cut_to=plan.rewind_to,
            run=run,
            rows=plan.rows,
            rows_json=texts,
            deliveries=deliveries,
            scoped=plan.scoped_state,
            commit=None if commit_id is None else (commit_id, plan.result),
            drop_below=self._drop_below(snap.first_index, count),
            archive=snap.preserved,
        )

    async def get_messages(self, session_id: str, *, limit: int | None = None) -> list[Message]:
        """Rows oldest first; ``limit`` keeps the last N."""
        if limit is not None:
            await self._checked(session_id, lambda: check_tail_limit(session_id, limit))
        if limit == 0:
            await self._snapshot(session_id)
            return []
        rows = RowSpan(0) if limit is None else RowSpan(0, limit=limit, last=True)
        snap = await self._snapshot(session_id, Want(rows=rows))
        return [row_message(row) for row in snap.rows]

    async def get_message_count(self, session_id: str) -> int:
        """All rows, context rows included."""
        return (await self._snapshot(session_id)).message_count

    async def get_ui_message_count(self, session_id: str) -> int:
        """Rows that are not context rows."""
        return (await self._snapshot(session_id)).ui_count

    async def is_truncated(self, session_id: str) -> bool:
        """Whether retention has dropped old rows."""
        return (await self._snapshot(session_id)).first_index > 0

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
        if order == "asc":
            span = RowSpan(start or 0, limit=limit)
        else:
            span = RowSpan(0, start, limit=limit, last=True)
        snap = await self._snapshot(session_id, Want(rows=span))
        first, count = snap.first_index, snap.message_count
        lo, hi = page_window(order, start, limit, first, count)
        rows = [row_message(row) for row in snap.rows]
        if order == "desc":
            rows.reverse()
        next_cursor = next_page_cursor(session_id, order, lo, hi, first, count)
        return MessagePage(messages=tuple(rows), next_cursor=next_cursor)

    async def truncate_messages(
        self, session_id: str, keep: int, *, fence_run_id: str | None = None
    ) -> None:
        """Drop rows at index >= ``keep``, re-opening the items they delivered."""

        def plan(snap: Snapshot) -> tuple[Changes, None]:
            check_keep(session_id, keep, snap.message_count)
            assert_fence(session_id, fence_run_id, snap.current_run)
            assert_retained(session_id, keep, snap.first_index, snap.message_count)
            return Changes(activity=self._activity(snap), cut_to=keep), None

        await self._write(session_id, _HEAD, plan)

    async def pop_messages(
        self, session_id: str, count: int = 1, *, fence_run_id: str | None = None
    ) -> list[Message]:
        """Remove the newest ``count`` rows atomically and return them, oldest first."""
        await self._checked(session_id, lambda: check_pop_count(session_id, count, fence_run_id))

        def plan(snap: Snapshot) -> tuple[Changes | None, list[Message]]:
            assert_fence(session_id, fence_run_id, snap.current_run)
            keep = pop_keep(count, snap.first_index, snap.message_count)
            if keep == snap.message_count:
                return None, []
            popped = [row_message(row) for row in snap.rows]
            return Changes(activity=self._activity(snap), cut_to=keep), popped

        want = Want(rows=RowSpan(0, limit=count, last=True))
        return await self._write(session_id, want, plan)

    async def replace_messages(
        self,
        session_id: str,
        keep: int,
        messages: Sequence[Message],
        *,
        expect_message_count: int,
        fence_run_id: str | None = None,
        archive: bool = False,
    ) -> CommitResult:
        """If the log still holds ``expect_message_count`` rows, cut it to ``keep`` rows and
        append ``messages``, atomically; ``archive``: the cut rows go to the archive (CS-19)."""

        def plan(snap: Snapshot) -> tuple[Changes, CommitResult]:
            checked = plan_replace(
                session_id,
                keep,
                messages,
                expect_message_count,
                fence_run_id,
                message_count=snap.message_count,
                first_index=snap.first_index,
                current_run=snap.current_run,
                archive=archive,
            )
            changes = self._commit_changes(snap, checked, None)
            if archive:
                cut = [row_message(row) for row in snap.rows]
                archived = archived_by_replace(keep, cut, checked.rows)
                changes = dataclasses.replace(changes, archived=archived)
            return changes, checked.result

        # An archiving replace reads the rows it cuts; a malformed keep is the plan's to refuse.
        archiving = archive is True and type(keep) is int and keep >= 0
        want = Want(rows=RowSpan(keep)) if archiving else _HEAD
        return await self._write(session_id, want, plan)
