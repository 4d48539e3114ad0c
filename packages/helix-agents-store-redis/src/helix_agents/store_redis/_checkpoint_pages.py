"""Paged checkpoint reads and deletes of the Redis store (CKP-3..CKP-6).

Each is one script. A page reads the session's ``ckptl`` sorted set, where
every checkpoint id has score 0 and so sorts by its bytes (the code point order
of core's :class:`~helix_agents.core.CheckpointRange`), with one
``ZREVRANGEBYLEX``; a delete removes the ids from the record hash and both
sorted sets and moves the activity time if anything went.
"""

from __future__ import annotations

from collections.abc import Sequence

from helix_agents.core import Checkpoint
from helix_agents.core.backend import check_checkpoint_ids, checkpoint_range

from ._base import StoreBase
from ._codec import load_record

__all__ = ["CheckpointPagesMixin"]


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
            session_id, lambda: checkpoint_range(session_id, prefix, before, limit)
        )
        if where.empty:
            await self._require(session_id)
            return []
        args = [*self._common(session_id), where.low, where.high or "", where.limit]
        reply = await self._run("ckpt_page", session_id, args, write=False)
        return [load_record(Checkpoint, raw) for raw in reply[1:]]

    async def delete_checkpoints(self, session_id: str, checkpoint_ids: Sequence[str]) -> int:
        """Delete the named checkpoints (unknown ids are skipped); how many were deleted."""
        ids = await self._checked(
            session_id, lambda: check_checkpoint_ids(session_id, checkpoint_ids)
        )
        if not ids:
            await self._require(session_id)
            return 0
        args = [*self._common(session_id), *ids]
        reply = await self._run("ckpt_delete", session_id, args, write=True)
        if reply[0] == "none":
            return 0
        await self._after(session_id, reply)
        return int(reply[3])
