"""The artifact log of one ADK user: its index, records and parts, and the commits that
change them (ADKA-1, -2, -6)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from google.adk.artifacts.base_artifact_service import ArtifactVersion

from helix_agents.core import (
    ChatMessage,
    JsonObject,
    MessageCommit,
    MessageCountConflictError,
    ScopedStateDelta,
    SessionNotFoundError,
    SessionStateStore,
)
from helix_agents.core.inputs import check_id
from helix_agents.core.scoped import MAX_SCOPED_KEYS

from ._side_sessions import ensure_side_session, owner_id, readable_side_session

__all__ = ["ARTIFACT_FIELD", "ArtifactLog", "index_key", "parsed_key"]

ARTIFACT_FIELD = "adk_artifact"
"""The provider field of a log row: which artifact and version the commit saved or deleted."""

_MAX_TRIES = 64
_MAX_VERSION = 10**18
# The index entry and the records take two keys of a commit; the rest may null parts.
_PARTS_PER_COMMIT = MAX_SCOPED_KEYS - 2


def index_key(session_id: str | None, filename: str) -> str:
    """The index key of an artifact: ``[session_id, filename]`` as compact JSON."""
    return json.dumps([session_id, filename], ensure_ascii=False, separators=(",", ":"))


def parsed_key(key: str) -> tuple[str | None, str] | None:
    """``(session_id, filename)`` of an index key, or ``None`` for a key not ours."""
    try:
        parts: object = json.loads(key)
    except ValueError:
        return None
    if isinstance(parts, list) and len(parts) == 2 and isinstance(parts[1], str):
        session_id, filename = parts
        if session_id is None or isinstance(session_id, str):
            return session_id, filename
    return None


class ArtifactLog:
    """The log session of ``(app_name, user_id)`` at ``sid`` on ``store``."""

    def __init__(self, store: SessionStateStore, sid: str, app_name: str, user_id: str) -> None:
        self.store = store
        self.sid = sid
        self.app_name = app_name
        self.user_id = user_id

    def part_owner(self, session_id: str | None, filename: str, version: int) -> str:
        """The owner of the ``user`` map holding one version's part (key ``part``)."""
        return owner_id(self.app_name, self.user_id, session_id, filename, version)

    def records_owner(self, session_id: str | None, filename: str) -> str:
        """The owner of the ``user`` map holding the artifact's records (key ``versions``)."""
        return owner_id(self.app_name, self.user_id, session_id, filename, "versions")

    def check_names(self, session_id: str | None, filename: str) -> None:
        """Refuse, before any write, an artifact whose key or owners are not ids."""
        check_id(index_key(session_id, filename), "artifact key", session_id=self.sid)
        check_id(self.records_owner(session_id, filename), "artifact owner", session_id=self.sid)
        # The longest a version number gets: every version's owner fits if this one does.
        owner = self.part_owner(session_id, filename, _MAX_VERSION)
        check_id(owner, "artifact owner", session_id=self.sid)

    async def index(self) -> dict[str, Any]:
        """The index (``{}`` while the log does not exist or is another adapter's)."""
        if await readable_side_session(self.store, self.sid) is None:
            return {}
        try:
            return await self.store.get_scoped_state("session", self.sid)
        except SessionNotFoundError:
            return {}

    async def versions(self, session_id: str | None, filename: str) -> list[ArtifactVersion]:
        """The version records of one artifact, oldest first."""
        if await readable_side_session(self.store, self.sid) is None:
            return []
        records = await self._records(session_id, filename)
        return [ArtifactVersion.model_validate(record) for record in records]

    async def save(
        self,
        session_id: str | None,
        filename: str,
        part: JsonObject,
        record: Callable[[int], ArtifactVersion],
    ) -> int:
        """Append a version (its record made by ``record(number)``) and return its number."""
        count = (await ensure_side_session(self.store, self.sid, "artifacts")).message_count
        for _ in range(_MAX_TRIES):
            # The count first, then the records: records newer than the count fail the commit.
            records = await self._records(session_id, filename)
            version = len(records)
            records.append(record(version).model_dump(mode="json"))
            owner = self.part_owner(session_id, filename, version)
            commit = MessageCommit(
                messages=(self._row(session_id, filename, version),),
                expect_message_count=count,
                scoped_state=(
                    *self._entry(session_id, filename, version + 1, records),
                    ScopedStateDelta(scope="user", owner=owner, changes={"part": part}),
                ),
            )
            try:
                await self.store.append_messages(self.sid, commit)
            except MessageCountConflictError:
                count = await self.store.get_message_count(self.sid)
                continue
            return version
        raise MessageCountConflictError(
            f"session {self.sid!r}: artifact {filename!r} lost {_MAX_TRIES} races in a row",
            session_id=self.sid,
        )

    async def delete(self, session_id: str | None, filename: str) -> None:
        """Null the index entry, the records and every version's part (ADKA-6)."""
        if await readable_side_session(self.store, self.sid) is None:
            return
        for _ in range(_MAX_TRIES):
            count = await self.store.get_message_count(self.sid)
            versions = list(range(len(await self._records(session_id, filename))))
            if not versions:
                return
            # Beyond one commit's keys: the newest versions' bytes go first, unfenced.
            while len(versions) > _PARTS_PER_COMMIT:
                newest = versions[-_PARTS_PER_COMMIT:]
                del versions[-_PARTS_PER_COMMIT:]
                changes = tuple(self._nulls(session_id, filename, newest))
                row = self._row(session_id, filename, None)
                await self.store.append_messages(
                    self.sid, MessageCommit(messages=(row,), scoped_state=changes)
                )
                count += 1
            commit = MessageCommit(
                messages=(self._row(session_id, filename, None),),
                expect_message_count=count,
                scoped_state=(
                    *self._entry(session_id, filename, None, None),
                    *self._nulls(session_id, filename, versions),
                ),
            )
            try:
                await self.store.append_messages(self.sid, commit)
            except MessageCountConflictError:
                continue
            return
        raise MessageCountConflictError(
            f"session {self.sid!r}: deleting artifact {filename!r} lost {_MAX_TRIES} races",
            session_id=self.sid,
        )

    async def _records(self, session_id: str | None, filename: str) -> list[Any]:
        """The artifact's records as stored (a deleted or missing artifact has none)."""
        stored = await self.store.get_scoped_state("user", self.records_owner(session_id, filename))
        records = stored.get("versions")
        return list(records) if isinstance(records, list) else []

    def _entry(
        self, session_id: str | None, filename: str, count: int | None, records: list[Any] | None
    ) -> tuple[ScopedStateDelta, ScopedStateDelta]:
        """The index entry (the version count) and the records, as two deltas."""
        return (
            ScopedStateDelta(scope="session", changes={index_key(session_id, filename): count}),
            ScopedStateDelta(
                scope="user",
                owner=self.records_owner(session_id, filename),
                changes={"versions": records},
            ),
        )

    def _nulls(
        self, session_id: str | None, filename: str, versions: Sequence[int]
    ) -> list[ScopedStateDelta]:
        return [
            ScopedStateDelta(
                scope="user",
                owner=self.part_owner(session_id, filename, v),
                changes={"part": None},
            )
            for v in versions
        ]

    def _row(self, session_id: str | None, filename: str, version: int | None) -> ChatMessage:
        saved: JsonObject = {"session_id": session_id, "filename": filename, "version": version}
        return ChatMessage(role="assistant", content=None, **{ARTIFACT_FIELD: saved})
