"""Session lifecycle of :class:`RedisStateStore`: create, get, delete, clear, clone."""

from __future__ import annotations

from typing import Any

import pydantic

from helix_agents.core import JsonObject, SessionExistsError, SessionInfo, SessionNotFoundError
from helix_agents.core.backend import check_id, check_limit, check_new_session, new_session_id
from helix_agents.core.refusals import raise_refusal

from ._base import StoreBase
from ._codec import dump_metadata, from_micros, session_info, text
from ._errors import DRIVER_ERRORS, SERVER, driver_error

__all__ = ["SessionsMixin"]

_metadata = pydantic.TypeAdapter(dict[str, pydantic.JsonValue])


class SessionsMixin(StoreBase):
    """Whole sessions: each write one script on the session's slot, then (cluster) the index."""

    async def create_session(
        self,
        session_id: str | None = None,
        *,
        user_id: str | None = None,
        metadata: JsonObject | None = None,
    ) -> SessionInfo:
        """Create a session; mint a unique id when none is given."""
        self._live()
        sid, meta = check_new_session(session_id, user_id, metadata)
        return await self._create(sid, user_id, meta, (0, 0, 0), [], [])

    async def _create(
        self,
        sid: str,
        user_id: str | None,
        meta: JsonObject,
        counts: tuple[int, int, int],
        rows: list[str],
        checkpoints: list[Any],
    ) -> SessionInfo:
        """Write a new session (``counts`` = first, count, ui) with its rows and checkpoints."""
        common = self._common(sid)
        user = ["0", "", ""] if user_id is None else ["1", user_id, self.options.keys.user(user_id)]
        reply = await self._run(
            "create",
            sid,
            [
                *common,
                *user,
                dump_metadata(meta),
                *counts,
                len(rows),
                *rows,
                len(checkpoints) // 3,
                *checkpoints,
            ],
            write=True,
        )
        if reply[0] == "exists":
            raise SessionExistsError(f"session {sid!r} exists", session_id=sid)
        await self._after(sid, reply, "SET")
        now = from_micros(common[1])
        return SessionInfo(
            id=sid,
            user_id=user_id,
            created_at=now,
            last_activity_at=now,
            message_count=counts[1],
            metadata=meta,
        )

    async def get_session(self, session_id: str) -> SessionInfo | None:
        """The session, or ``None``."""
        client, _ = self._live()
        check_id(session_id, "session_id")
        try:
            meta = text(await client.hgetall(self.options.keys.meta(session_id)))
        except DRIVER_ERRORS as exc:
            raise driver_error(exc, session_id, write=False) from exc
        return session_info(session_id, meta) if meta else None

    async def delete_session(self, session_id: str) -> bool:
        """Delete the session and everything it holds; ``True`` if it existed."""
        self._open_session(session_id)
        try:
            reply = await self._run("delete", session_id, self._common(session_id), write=True)
            while reply[0] == "pending":  # app and user deltas to apply first
                await self._settle(session_id, {})
                reply = await self._run("delete", session_id, self._common(session_id), write=True)
        except SessionNotFoundError:
            return False
        la, ukey = int(reply[1]), reply[2]
        if self.cluster and ukey:
            await self._index("index_drop", ukey, [session_id, -la])
        return True

    async def clear_session(self, session_id: str) -> None:
        """Drop rows, checkpoints, approvals, items and late answers; cancel a live run."""
        self._open_session(session_id)
        reply = await self._run("clear", session_id, self._common(session_id), write=True)
        await self._after(session_id, reply)

    async def clone_session(
        self, source_id: str, target_id: str | None = None, *, up_to: int | None = None
    ) -> SessionInfo:
        """Copy rows ``[0, up_to)`` and the checkpoints in range into a new session.

        The source is read in one step and the copy written in another (on a
        cluster the two sessions live in different slots).
        """
        self._open_session(source_id)
        if up_to is not None and (
            isinstance(up_to, bool) or not isinstance(up_to, int) or up_to < 0
        ):
            await self._require(source_id)
            check_limit(source_id, "up_to", up_to, 0, 0)
        reply = await self._run(
            "r_clone",
            source_id,
            [-1 if up_to is None else up_to],
            write=False,
            keys=("meta", "rows", "ckpt", "ckptn"),
        )
        if reply[0] == "invalid":  # up_to beyond the rows, or below those retention kept
            raise_refusal(
                source_id,
                reply[0],
                [
                    lambda: check_limit(
                        source_id,
                        "up_to",
                        -1 if up_to is None else up_to,
                        int(reply[1]),
                        int(reply[2]),
                    )
                ],
                server=SERVER,
            )
        first, ui, user_id, md, rows, checkpoints = (
            int(reply[1]),
            int(reply[3]),
            reply[4],
            reply[5],
            reply[6],
            reply[7],
        )
        sid = new_session_id(target_id, "target_id")
        count = first + len(rows)
        meta = _metadata.validate_json(md)
        return await self._create(sid, user_id, meta, (first, count, ui), rows, checkpoints)
