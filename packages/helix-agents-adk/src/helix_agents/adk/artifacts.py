"""``HelixArtifactService``: ADK's ``BaseArtifactService`` over any ``SessionStateStore``."""

from __future__ import annotations

import time
from typing import Any

from google.adk.artifacts import artifact_util
from google.adk.artifacts.base_artifact_service import (
    ArtifactVersion,
    BaseArtifactService,
    ensure_part,
)
from google.genai import types
from typing_extensions import override

from helix_agents.core import SessionStateStore
from helix_agents.core.adapters import check_writable, readable

from . import _names
from ._artifact_log import ArtifactLog, parsed_key
from ._artifact_parts import checked_metadata, is_rewind_marker, mime_type_of, stored_part
from ._checks import refusing
from ._side_sessions import adk_session, side_id
from .errors import AdkValidationError

__all__ = ["HelixArtifactService"]

_MAX_REFERENCE_HOPS = 5


class HelixArtifactService(BaseArtifactService):
    """ADK artifacts on a helix-agents store, versioned per app, user and session.

    Each user's artifacts live beside one store session, the artifact log: its
    ``session`` map indexes the versions, each version's part is a ``user`` map
    (docs/integrations/adk.md, ADKA-1..8). A save is one commit with the expected row
    count, so concurrent saves of one filename get distinct versions and lose none.
    The store stays the caller's: the service neither opens nor closes it.
    """

    def __init__(self, store: SessionStateStore) -> None:
        self.store = store

    @override
    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        artifact: types.Part | dict[str, Any],
        session_id: str | None = None,
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        """Save a new version of the artifact and return its number (0 for the first).

        Too large is :class:`~helix_agents.adk.ArtifactTooLargeError`; a part that would
        not come back equal, or a session-scoped name without ``session_id``, is
        :class:`~helix_agents.adk.AdkValidationError`; nothing is written either way.
        """
        log, scope = self._log(app_name, user_id, filename, session_id)
        try:
            part = ensure_part(artifact)
        except ValueError as exc:
            raise AdkValidationError(
                f"session {log.sid!r}: artifact {filename!r} is not a Part: {exc}",
                session_id=log.sid,
            ) from exc
        mime_type = mime_type_of(part, log.sid, filename)
        if artifact_util.is_artifact_ref(part):
            self._check_reference(part, app_name, user_id, session_id, log.sid)
        data = stored_part(part, log.sid, filename)
        metadata = checked_metadata(custom_metadata, log.sid, filename)

        def record(version: int) -> ArtifactVersion:
            uri = artifact_util.get_artifact_uri(app_name, user_id, filename, version, scope)
            return ArtifactVersion(
                version=version,
                canonical_uri=uri,
                custom_metadata=metadata,
                create_time=time.time(),
                mime_type=mime_type,
            )

        with refusing():
            log.check_names(scope, filename)
            await self._check_session(app_name, user_id, scope, write=True)
            return await log.save(scope, filename, data, record)

    @override
    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> types.Part | None:
        """The part of the version (the latest without ``version``), or ``None``."""
        return await self._load(app_name, user_id, filename, session_id, version, 0)

    async def _load(
        self,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None,
        version: int | None,
        hops: int,
    ) -> types.Part | None:
        log, scope = self._log(app_name, user_id, filename, session_id)
        with refusing():
            if not await self._check_session(app_name, user_id, scope, write=False):
                return None
            record = _pick(await log.versions(scope, filename), version)
            if record is None:
                return None
            stored = await self.store.get_scoped_state(
                "user", log.part_owner(scope, filename, record.version)
            )
        data = stored.get("part")
        if data is None:
            return None
        part = types.Part.model_validate(data)
        if is_rewind_marker(part):
            return None
        if not artifact_util.is_artifact_ref(part):
            return part
        assert part.file_data is not None and part.file_data.file_uri is not None
        target = artifact_util.resolve_artifact_reference(
            file_uri=part.file_data.file_uri,
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            remaining_depth=_MAX_REFERENCE_HOPS - hops,
        )
        return await self._load(
            target.app_name,
            target.user_id,
            target.filename,
            target.session_id,
            target.version,
            hops + 1,
        )

    @override
    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str | None = None
    ) -> list[str]:
        """The session's filenames and the user's ``user:`` ones (only those without a session)."""
        _names.check_names(app_name=app_name, user_id=user_id, session_id=session_id or "")
        log = ArtifactLog(self.store, side_id(app_name, user_id, "artifacts"), app_name, user_id)
        with refusing():
            if session_id is not None and not await self._check_session(
                app_name, user_id, session_id, write=False
            ):
                session_id = None
            index = await log.index()
        names = []
        for key, records in index.items():
            parsed = parsed_key(key)
            if parsed is not None and records and parsed[0] in (None, session_id):
                names.append(parsed[1])
        return sorted(names)

    @override
    async def delete_artifact(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> None:
        """Delete every version of the artifact; a missing one is nothing to do."""
        log, scope = self._log(app_name, user_id, filename, session_id)
        with refusing():
            await self._check_session(app_name, user_id, scope, write=True)
            await log.delete(scope, filename)

    @override
    async def list_versions(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> list[int]:
        """The artifact's version numbers, oldest first (``[]`` for none)."""
        records = await self.list_artifact_versions(
            app_name=app_name, user_id=user_id, filename=filename, session_id=session_id
        )
        return [record.version for record in records]

    @override
    async def list_artifact_versions(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> list[ArtifactVersion]:
        """The artifact's version records, oldest first (``[]`` for none)."""
        log, scope = self._log(app_name, user_id, filename, session_id)
        with refusing():
            if not await self._check_session(app_name, user_id, scope, write=False):
                return []
            return await log.versions(scope, filename)

    @override
    async def get_artifact_version(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> ArtifactVersion | None:
        """The record of the version (the latest without ``version``), or ``None``."""
        records = await self.list_artifact_versions(
            app_name=app_name, user_id=user_id, filename=filename, session_id=session_id
        )
        return _pick(records, version)

    def _log(
        self, app_name: str, user_id: str, filename: str, session_id: str | None
    ) -> tuple[ArtifactLog, str | None]:
        """The user's log and the artifact's session (``None`` for a ``user:`` name)."""
        _names.check_names(app_name=app_name, user_id=user_id, filename=filename)
        if session_id is not None:
            _names.check_names(session_id=session_id)
        log = ArtifactLog(self.store, side_id(app_name, user_id, "artifacts"), app_name, user_id)
        if filename.startswith("user:"):
            return log, None
        if session_id is None:
            raise AdkValidationError(
                f"session {log.sid!r}: artifact {filename!r} is session-scoped; "
                "session_id must be given",
                session_id=log.sid,
            )
        return log, session_id

    async def _check_session(
        self, app_name: str, user_id: str, session_id: str | None, *, write: bool
    ) -> bool:
        """Whether the artifact's ADK session may be used: not another adapter's (ADKA-8).

        A write to another adapter's session raises its ``ForeignSessionError``.
        """
        if session_id is None:
            return True
        info = await adk_session(self.store, app_name, user_id, session_id)
        if info is None:
            return True
        if write:
            check_writable(info, "adk")
        return readable(info, "adk")

    def _check_reference(
        self,
        part: types.Part,
        app_name: str,
        user_id: str,
        session_id: str | None,
        sid: str,
    ) -> None:
        assert part.file_data is not None and part.file_data.file_uri is not None
        target = artifact_util.parse_artifact_uri(part.file_data.file_uri)
        try:
            if target is None:
                raise ValueError(f"invalid artifact reference {part.file_data.file_uri!r}")
            artifact_util.validate_artifact_reference_scope(
                app_name=app_name, user_id=user_id, session_id=session_id, parsed_uri=target
            )
        except ValueError as exc:
            raise AdkValidationError(f"session {sid!r}: {exc}", session_id=sid) from exc


def _pick(records: list[ArtifactVersion], version: int | None) -> ArtifactVersion | None:
    if not records:
        return None
    if version is None:
        return records[-1]
    return records[version] if 0 <= version < len(records) else None
