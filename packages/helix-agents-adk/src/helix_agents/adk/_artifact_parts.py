"""An artifact's part as stored JSON: checked to read back equal, sized, typed (ADKA-4, -5, -7)."""

from __future__ import annotations

from typing import Any

from google.adk.artifacts import artifact_util
from google.adk.artifacts.base_artifact_service import ArtifactVersion
from google.genai import types

from helix_agents.core import JsonObject
from helix_agents.core.inputs import check_json

from ._checks import refusing
from .artifact_errors import ArtifactTooLargeError
from .errors import AdkValidationError

__all__ = [
    "MAX_ARTIFACT_BYTES",
    "checked_metadata",
    "is_rewind_marker",
    "mime_type_of",
    "stored_part",
]

MAX_ARTIFACT_BYTES = 16 << 20
"""The most bytes of JSON one artifact version may take (ADKA-5)."""

# What ADK's session rewind saves to remove an artifact; every artifact service loads a
# version holding it as absent (google.adk.artifacts.artifact_util documents the marker).
_REWIND_MARKER = types.Part(inline_data=types.Blob(mime_type="application/octet-stream", data=b""))


def _refused(sid: str, filename: str, what: str) -> AdkValidationError:
    return AdkValidationError(f"session {sid!r}: artifact {filename!r} {what}", session_id=sid)


def stored_part(part: types.Part, sid: str, filename: str) -> JsonObject:
    """The JSON ``part`` is stored as, if it reads back equal and fits ``MAX_ARTIFACT_BYTES``."""
    try:
        text = part.model_dump_json(exclude_none=True)
        back = types.Part.model_validate_json(text)
    except (ValueError, TypeError, RecursionError) as exc:
        raise _refused(sid, filename, f"cannot be stored as JSON: {exc}") from exc
    size = len(text.encode())
    if size > MAX_ARTIFACT_BYTES:
        raise ArtifactTooLargeError(
            f"session {sid!r}: artifact {filename!r} is {size} bytes of JSON; "
            f"at most {MAX_ARTIFACT_BYTES} (MAX_ARTIFACT_BYTES)",
            session_id=sid,
            filename=filename,
            size=size,
            limit=MAX_ARTIFACT_BYTES,
        )
    if back != part:
        raise _refused(sid, filename, "would not come back equal from its JSON")
    data: JsonObject = back.model_dump(mode="json", exclude_none=True)
    with refusing():
        check_json({"part": data}, f"artifact {filename!r}", session_id=sid)  # as stored
    return data


def mime_type_of(part: types.Part, sid: str, filename: str) -> str | None:
    """The version's ``mime_type``, as ADK's services record it; refuse a part of no kind."""
    if part.inline_data is not None:
        return part.inline_data.mime_type
    if part.text is not None:
        return "text/plain"
    if part.file_data is not None:
        # A reference's type is known only once it is followed.
        return None if artifact_util.is_artifact_ref(part) else part.file_data.mime_type
    raise _refused(
        sid, filename, "is not a supported artifact type (no inline_data, text, file_data)"
    )


def checked_metadata(metadata: dict[str, Any] | None, sid: str, filename: str) -> JsonObject:
    """``custom_metadata`` if it comes back equal from JSON and fits in its record as stored."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        got = type(metadata).__name__
        raise _refused(sid, filename, f"custom_metadata must be a dict, got {got}")
    try:
        record = ArtifactVersion(version=0, canonical_uri="", custom_metadata=metadata)
        dumped = record.model_dump(mode="json")["custom_metadata"]
    except (ValueError, TypeError, RecursionError) as exc:
        raise _refused(sid, filename, f"custom_metadata cannot be stored as JSON: {exc}") from exc
    with refusing():
        # As stored: inside the list of records of the artifact's records map.
        check_json({"versions": [{"custom_metadata": dumped}]}, "record", session_id=sid)
    if dumped != metadata:
        # A tuple, a NaN, a datetime: JSON would hand back something else.
        raise _refused(sid, filename, "custom_metadata would not come back equal from JSON")
    return dict(dumped)


def is_rewind_marker(part: types.Part) -> bool:
    """Whether ``part`` is ADK's rewind marker (an empty octet-stream blob)."""
    return part == _REWIND_MARKER
