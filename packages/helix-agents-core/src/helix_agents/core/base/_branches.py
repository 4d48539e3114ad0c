"""Copies of a session: clones and branches (docs/lifecycle.md, "Branches"), once for
every engine."""

from __future__ import annotations

import copy

from ..errors import SessionExistsError, SessionNotFoundError, ValidationError, session_not_found
from ..inputs import check_id
from ..models import Branch, SessionInfo
from ..rules import check_limit, new_session_id
from ..seam import Changes, NewSession, Snapshot, Want
from ..sessiondoc import SessionDoc
from ._plumbing import Plumbing

__all__ = ["MAX_BRANCHES", "BranchMethods"]

MAX_BRANCHES = 1_000
"""The most branches one session records; a fork past it is refused (BR-5)."""


class BranchMethods(Plumbing):
    """Clone a session, fork a branch of it, list its branches."""

    async def clone_session(
        self, source_id: str, target_id: str | None = None, *, up_to: int | None = None
    ) -> SessionInfo:
        """Copy rows ``[0, up_to)`` and the checkpoints in range into a new session."""
        snap = await self._snapshot(source_id)
        return await self._copy(snap, target_id, up_to, fork=False, checkpoint_id=None)

    async def fork_session(
        self,
        source_id: str,
        target_id: str | None = None,
        *,
        at: int | None = None,
        checkpoint_id: str | None = None,
    ) -> SessionInfo:
        """A branch of the session: a copy of its rows ``[0, at)`` (or up to the checkpoint
        ``checkpoint_id``) that names its parent and is listed by ``list_branches``
        (BR-1..BR-6)."""
        want = Want()
        if checkpoint_id is not None:
            await self._checked(
                source_id, lambda: check_id(checkpoint_id, "checkpoint_id", session_id=source_id)
            )
            want = Want(checkpoint_ids=(checkpoint_id,))
        snap = await self._snapshot(source_id, want)
        if at is not None and checkpoint_id is not None:
            raise ValidationError(
                f"session {source_id!r}: fork at a row count or at a checkpoint, not both",
                session_id=source_id,
            )
        if len(SessionDoc(snap.metadata).own.get("bs", [])) >= MAX_BRANCHES:
            raise ValidationError(
                f"session {source_id!r} has {MAX_BRANCHES} branches, the most it records",
                session_id=source_id,
            )
        if checkpoint_id is not None:
            found = snap.named_checkpoints.get(checkpoint_id)
            if found is None:
                raise ValidationError(
                    f"session {source_id!r}: no checkpoint {checkpoint_id!r} to fork at",
                    session_id=source_id,
                )
            at = found.message_count
        created = await self._copy(snap, target_id, at, fork=True, checkpoint_id=checkpoint_id)
        assert created.branch_of is not None
        await self._note_branch(source_id, created.branch_of)
        return created

    async def list_branches(self, session_id: str) -> list[Branch]:
        """The branches forked from the session that still exist, oldest first (BR-4)."""
        snap = await self._snapshot(session_id)
        found = []
        for branch in SessionDoc(snap.metadata).branches():
            child = await self.engine.snapshot(branch.session_id, Want())
            if child is None or self._expired(child):  # gone, or expired (TTL-1)
                continue
            if SessionDoc(child.metadata).branch_of == branch:
                found.append(branch)
        return found

    async def _copy(
        self,
        snap: Snapshot,
        target_id: str | None,
        up_to: int | None,
        *,
        fork: bool,
        checkpoint_id: str | None,
    ) -> SessionInfo:
        """Create the copy of ``snap``'s rows below ``up_to`` (all: ``None``) in one engine
        write, planned again while the source moves; with ``fork``, it names its parent."""
        source_id = snap.session_id
        while True:
            end = snap.message_count if up_to is None else up_to
            check_limit(
                source_id, "at" if fork else "up_to", end, snap.first_index, snap.message_count
            )
            target = new_session_id(target_id, "target_id")
            now = self._clock()
            branch = (
                Branch(
                    session_id=target,
                    parent_id=source_id,
                    at=end,
                    checkpoint_id=checkpoint_id,
                    created_at=now,
                )
                if fork
                else None
            )
            meta = copy.deepcopy(SessionDoc(snap.metadata).copied(end, branch))
            new = NewSession(
                target, snap.user_id, now, meta, clone_of=(source_id, snap.version, end)
            )
            outcome = await self.engine.create(new)
            if outcome == "exists" and await self._reclaim(target):  # expired: free (TTL-3)
                outcome = await self.engine.create(new)
            if outcome == "created":
                doc = SessionDoc(meta)
                return SessionInfo(
                    id=target,
                    user_id=snap.user_id,
                    created_at=now,
                    last_activity_at=now,
                    message_count=end,
                    metadata=copy.deepcopy(doc.user),
                    title=doc.title,
                    metadata_version=doc.version,
                    branch_of=branch,
                )
            if outcome == "exists":
                raise SessionExistsError(f"session {target!r} exists", session_id=target)
            if outcome.snapshot is None:
                raise session_not_found(source_id)
            snap = outcome.snapshot

    async def _note_branch(self, source_id: str, branch: Branch) -> None:
        """Record ``branch`` on its parent; neither the parent's activity nor its metadata
        version moves. A parent deleted meanwhile records nothing."""

        def plan(snap: Snapshot) -> tuple[Changes, None]:
            doc = SessionDoc(snap.metadata)
            doc.own["bs"] = [*doc.own.get("bs", []), branch.model_dump(mode="json")]
            return Changes(activity=snap.last_activity_at, metadata=doc.stored()), None

        try:
            await self._write(source_id, Want(), plan)
        except SessionNotFoundError:
            return
