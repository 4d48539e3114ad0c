"""How values are written to Redis and read back: JSON text and integer microseconds."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pydantic

from helix_agents.core import Message, SessionInfo, ValidationError
from helix_agents.core.backend import dump_message_json, parse_message_json
from helix_agents.core.models import RunInfo, RunStatus

__all__ = [
    "dump_metadata",
    "dump_record",
    "from_micros",
    "load_record",
    "micros",
    "pack_row",
    "run_info",
    "session_info",
    "text",
    "unpack_rows",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_M = TypeVar("_M", bound=pydantic.BaseModel)
_metadata = pydantic.TypeAdapter(dict[str, pydantic.JsonValue])


def micros(at: datetime) -> int:
    """``at`` as integer microseconds since the epoch (a naive time is taken as UTC)."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return (at - _EPOCH) // _MICROSECOND


def from_micros(value: Any) -> datetime:
    """The UTC datetime of a microsecond count (as stored or returned by a script)."""
    return _EPOCH + timedelta(0, 0, int(value))  # positional: cheaper than microseconds=


def text(value: Any) -> Any:
    """A reply with every ``bytes`` decoded, whatever the client's ``decode_responses``."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, (list, tuple)):
        return [text(v) for v in value]
    if isinstance(value, dict):
        return {text(k): text(v) for k, v in value.items()}
    return value


def pack_row(message: Message, session_id: str) -> str:
    """A row as stored: a one-letter kind ('c' for context rows) and its JSON."""
    return ("c" if message.role == "context" else "m") + dump_message_json(message, session_id)


def unpack_rows(joined: str | bytes | None) -> list[Message]:
    """The rows a read script returned joined by newlines (see ``lua/r_tail.lua``).

    Row JSON never holds a raw newline: JSON escapes every control character.
    """
    if not joined:
        return []
    rows: list[str] | list[bytes] = (
        joined.split(b"\n") if isinstance(joined, bytes) else joined.split("\n")
    )
    return [parse_message_json(row[1:]) for row in rows]


def dump_record(record: pydantic.BaseModel) -> str:
    """A record (item, late answer, approval, checkpoint) as JSON, keeping which fields were set."""
    try:
        return record.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError as exc:  # pydantic_core.PydanticSerializationError
        raise ValidationError(f"{type(record).__name__} cannot be stored as JSON: {exc}") from None


def load_record(model: type[_M], stored: str) -> _M:
    """The record a :func:`dump_record` string holds."""
    return model.model_validate_json(stored)


def dump_metadata(metadata: Mapping[str, Any]) -> str:
    """Session metadata as JSON."""
    return json.dumps(metadata, separators=(",", ":"), ensure_ascii=False)


def run_info(fields: Mapping[str, Any]) -> RunInfo | None:
    """The current run from a session's ``run_*`` fields, or ``None``."""
    run_id = fields.get("run_id")
    if run_id is None:
        return None
    status: RunStatus = fields["run_status"]
    ended = fields.get("run_ended")
    return RunInfo(
        run_id=run_id,
        status=status,
        started_at=from_micros(fields["run_started"]),
        ended_at=None if ended is None else from_micros(ended),
    )


def session_info(session_id: str, meta: Mapping[str, Any]) -> SessionInfo:
    """A :class:`SessionInfo` from the session's ``meta`` hash."""
    return SessionInfo(
        id=session_id,
        user_id=meta.get("user"),
        created_at=from_micros(meta["created"]),
        last_activity_at=from_micros(meta["la"]),
        message_count=int(meta["count"]),
        current_run=run_info(meta),
        metadata=_metadata.validate_json(meta["md"]),
    )
