"""Session metadata, titles and redaction (docs/lifecycle.md), once for every engine."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from pydantic import JsonValue

from ..errors import ConcurrencyConflictError, ValidationError
from ..inputs import check_id
from ..messages import ChatMessage
from ..models import Redaction, SessionInfo
from ..seam import Changes, RowSpan, Snapshot, Want, head_of
from ..sessiondoc import (
    SessionDoc,
    assert_version,
    check_expect_version,
    check_patch,
    check_redaction,
    check_size,
    check_title,
    is_tombstone,
    merge_patch,
    tombstone,
)
from ._plumbing import Plumbing, info, row_message

__all__ = ["ERASE_BATCH", "ERASE_ROUNDS", "LifecycleMethods"]

_ALL_ROWS = Want(rows=RowSpan(0))
ERASE_BATCH = 200
"""Sessions read per listing call while erasing a user."""
ERASE_ROUNDS = 5
"""Listing passes an erasure makes before it gives up on sessions still being created."""


class LifecycleMethods(Plumbing):
    """Update metadata, set a title, redact a row, read the redaction audit."""

    async def update_session_metadata(
        self,
        session_id: str,
        patch: Mapping[str, JsonValue],
        *,
        expect_version: int | None = None,
    ) -> SessionInfo:
        """Merge ``patch`` into the metadata (JSON Merge Patch: ``None`` removes a key) if
        the metadata version is still ``expect_version`` (META-2, META-3)."""
        checked, expected = await self._checked(
            session_id,
            lambda: (
                check_patch(session_id, patch),
                check_expect_version(session_id, expect_version),
            ),
        )

        def change(doc: SessionDoc) -> None:
            doc.user = merge_patch(doc.user, checked)
            check_size(session_id, doc.user)

        return await self._update_doc(session_id, expected, change)

    async def set_session_title(
        self, session_id: str, title: str | None, *, expect_version: int | None = None
    ) -> SessionInfo:
        """Set the title (1..200 characters) or clear it (``None``), as a metadata update
        (META-4)."""
        checked, expected = await self._checked(
            session_id,
            lambda: (
                check_title(session_id, title),
                check_expect_version(session_id, expect_version),
            ),
        )

        def change(doc: SessionDoc) -> None:
            if checked is None:
                doc.own.pop("t", None)
            else:
                doc.own["t"] = checked

        return await self._update_doc(session_id, expected, change)

    async def _update_doc(
        self,
        session_id: str,
        expected: int | None,
        change: Callable[[SessionDoc], None],
    ) -> SessionInfo:
        def plan(snap: Snapshot) -> tuple[Changes, SessionInfo]:
            doc = SessionDoc(snap.metadata)
            assert_version(session_id, expected, doc.version)
            change(doc)
            doc.own["v"] = doc.version + 1
            stored = doc.stored()
            activity = self._activity(snap)
            after = dataclasses.replace(head_of(snap), metadata=stored, last_activity_at=activity)
            return Changes(activity=activity, metadata=stored), info(after)

        return await self._write(session_id, Want(), plan)

    async def redact_message(
        self,
        session_id: str,
        row: int | str,
        *,
        reason: str,
        replacement: str | None = None,
        actor: str | None = None,
    ) -> Redaction:
        """Replace one retained row (by index, or the first with that id) with a tombstone,
        in place, and record who, when and why (RED-1..RED-6); already redacted: its
        record, nothing written."""
        target, text, why, who = await self._checked(
            session_id, lambda: check_redaction(session_id, row, replacement, reason, actor)
        )

        def plan(snap: Snapshot) -> tuple[Changes | None, Redaction]:
            index = _row_index(snap, target)
            found = row_message(snap.rows[index - snap.rows_from])
            doc = SessionDoc(snap.metadata)
            audit = doc.redactions()
            if is_tombstone(found):
                done = [r for r in audit if r.index == index]
                if done:
                    return None, done[-1]
            record = Redaction(
                index=index,
                row_id=found.id if isinstance(found, ChatMessage) else None,
                role=found.role,
                actor=who,
                reason=why,
                at=self._clock(),
                replaced=text is not None,
            )
            doc.own["r"] = [*doc.own.get("r", []), record.model_dump(mode="json")]
            changes = Changes(
                activity=self._activity(snap),
                metadata=doc.stored(),
                redact=(index, tombstone(found, text)),
            )
            return changes, record

        want = Want(rows=RowSpan(target, target + 1)) if isinstance(target, int) else _ALL_ROWS
        return await self._write(session_id, want, plan)

    async def list_redactions(self, session_id: str) -> list[Redaction]:
        """The session's redaction audit, oldest first (RED-5)."""
        return SessionDoc((await self._snapshot(session_id)).metadata).redactions()

    async def erase_user(self, user_id: str) -> list[str]:
        """Delete every session of ``user_id`` and the user's map of scoped state; the ids
        of the sessions erased, sorted (ERA-1..ERA-5)."""
        self._check_open()
        check_id(user_id, "user_id")
        erased: set[str] = set()
        for _ in range(ERASE_ROUNDS):
            found = await self._user_session_ids(user_id)
            await self.engine.erase_user(user_id, found)
            for session_id in found:
                self._forget(session_id)
            erased.update(found)
            if not found:
                return sorted(erased)
        raise ConcurrencyConflictError(
            f"user {user_id!r}: sessions kept being created during the erasure "
            f"({len(erased)} erased); erase again once nothing creates them"
        )

    async def _user_session_ids(self, user_id: str) -> list[str]:
        """Every session id the user's listing holds now."""
        found: list[str] = []
        after = None
        while True:
            page = await self.engine.list_sessions(user_id, after, ERASE_BATCH)
            found.extend(s.id for s in page)
            if len(page) < ERASE_BATCH:
                return found
            after = (page[-1].last_activity_at, page[-1].id)


def _row_index(snap: Snapshot, target: int | str) -> int:
    """The absolute index of the retained row ``target`` names; refused when none does
    (RED-4)."""
    sid = snap.session_id
    if isinstance(target, str):
        for offset, stored in enumerate(snap.rows):
            found = row_message(stored)
            if isinstance(found, ChatMessage) and found.id == target:
                return snap.rows_from + offset
        raise ValidationError(f"session {sid!r}: no retained row has id {target!r}", session_id=sid)
    if target >= snap.message_count:
        raise ValidationError(
            f"session {sid!r}: row {target} does not exist (the session has "
            f"{snap.message_count} rows)",
            session_id=sid,
        )
    if target < snap.first_index:
        raise ValidationError(
            f"session {sid!r}: row {target} was dropped by retention (rows from "
            f"{snap.first_index} are kept); only a retained row can be redacted",
            session_id=sid,
        )
    return target
