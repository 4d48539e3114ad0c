"""Session metadata, titles and redaction (docs/lifecycle.md): checks and stored form,
written once for every engine.

A session's stored metadata is one JSON object: the caller's keys, plus core's own
record under the reserved key ``_helix`` (the title ``t``, the metadata version ``v``,
the redaction audit ``r``, where a branch was forked ``b``, the branches forked from the
session ``bs``). Engines store it as any metadata; core splits it on read,
so callers never see the reserved key and cannot write it (META-1).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pydantic

from .errors import MetadataVersionConflictError, ValidationError
from .inputs import check_id, check_json, check_text
from .messages import ChatMessage, ContextMessage, JsonObject, Message
from .models import Branch, Redaction

__all__ = [
    "MAX_METADATA_BYTES",
    "MAX_REASON_CHARS",
    "MAX_REPLACEMENT_CHARS",
    "MAX_TITLE_CHARS",
    "REDACTED",
    "RESERVED",
    "SessionDoc",
    "check_expect_version",
    "check_filter_title",
    "check_patch",
    "check_redaction",
    "check_title",
    "merge_patch",
    "refuse_reserved",
    "tombstone",
]

RESERVED = "_helix"
"""The metadata key core keeps its own record under; callers cannot use it."""
MAX_TITLE_CHARS = 200
"""The longest title, in characters."""
MAX_METADATA_BYTES = 65_536
"""The largest metadata an update may leave, as compact JSON in UTF-8 bytes."""
MAX_REASON_CHARS = 1_000
"""The longest reason of a redaction, in characters."""
MAX_REPLACEMENT_CHARS = 10_000
"""The longest replacement text of a redaction, in characters."""
REDACTED = "[redacted]"
"""The content of a redacted row when no replacement is given."""

_redactions: pydantic.TypeAdapter[list[Redaction]] = pydantic.TypeAdapter(list[Redaction])
_branches: pydantic.TypeAdapter[list[Branch]] = pydantic.TypeAdapter(list[Branch])


class SessionDoc:
    """A session's stored metadata, split into the caller's keys and core's record."""

    def __init__(self, stored: Mapping[str, Any]) -> None:
        # Shallow copies: nothing below changes a nested value in place.
        self.user: JsonObject = {k: v for k, v in stored.items() if k != RESERVED}
        self.own: dict[str, Any] = dict(stored.get(RESERVED, {}))

    @property
    def title(self) -> str | None:
        """The session's title, ``None`` when it has none."""
        title: str | None = self.own.get("t")
        return title

    @property
    def version(self) -> int:
        """The metadata version: how many metadata or title updates the session took."""
        return int(self.own.get("v", 0))

    def redactions(self) -> list[Redaction]:
        """The redaction audit, oldest first."""
        return _redactions.validate_python(self.own.get("r", []))

    @property
    def branch_of(self) -> Branch | None:
        """Where the session was forked, ``None`` unless it is a branch."""
        found = self.own.get("b")
        return None if found is None else Branch.model_validate(found)

    def branches(self) -> list[Branch]:
        """The branches forked from the session, as recorded, oldest first."""
        return _branches.validate_python(self.own.get("bs", []))

    def copied(self, end: int, branch: Branch | None) -> JsonObject:
        """The stored metadata of a copy of the session's rows below ``end``: the audit
        of those rows, no branches of its own, and ``branch`` as its fork point."""
        own = {k: v for k, v in self.own.items() if k not in ("r", "b", "bs")}
        kept = [r.model_dump(mode="json") for r in self.redactions() if r.index < end]
        if kept:  # the audit of the rows the copy holds (RED-5)
            own["r"] = kept
        if branch is not None:
            own["b"] = branch.model_dump(mode="json")
        return SessionDoc({**self.user, RESERVED: own}).stored()

    def stored(self) -> JsonObject:
        """The object to store: the caller's keys and, when it holds anything, core's record."""
        out = dict(self.user)
        if self.own:
            out[RESERVED] = self.own
        return out


def refuse_reserved(session_id: str | None, metadata: Mapping[str, Any], field: str) -> None:
    """A caller's metadata (or filter) may not name the reserved key (META-1)."""
    if RESERVED in metadata:
        where = "" if session_id is None else f"session {session_id!r}: "
        raise ValidationError(
            f"{where}{field} key {RESERVED!r} is reserved for the store's own record",
            session_id=session_id,
        )


def check_patch(session_id: str, patch: object) -> JsonObject:
    """A metadata patch: a JSON object, without the reserved key (META-2, META-1)."""
    if not isinstance(patch, Mapping):
        raise ValidationError(
            f"session {session_id!r}: a metadata patch must be a JSON object, "
            f"got {type(patch).__name__}",
            session_id=session_id,
        )
    checked = dict(patch)
    check_json(checked, "patch", session_id=session_id)
    refuse_reserved(session_id, checked, "patch")
    return checked


def merge_patch(target: JsonObject, patch: Mapping[str, Any]) -> JsonObject:
    """``target`` with ``patch`` merged in as a JSON Merge Patch (RFC 7386): ``None``
    removes a key, an object merges into an object, anything else replaces."""
    out = dict(target)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict):
            inner = out.get(key)
            out[key] = merge_patch(inner if isinstance(inner, dict) else {}, value)
        else:
            out[key] = value
    return out


def check_size(session_id: str, metadata: JsonObject) -> None:
    """Metadata left by an update is at most :data:`MAX_METADATA_BYTES` (META-2)."""
    size = len(json.dumps(metadata, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_METADATA_BYTES:
        raise ValidationError(
            f"session {session_id!r}: metadata would be {size} bytes as JSON; "
            f"the most is {MAX_METADATA_BYTES}",
            session_id=session_id,
        )


def _check_title_text(session_id: str | None, title: object, field: str) -> str:
    text = check_text(title, field, session_id=session_id)
    if len(text) > MAX_TITLE_CHARS or not text.strip():
        where = "" if session_id is None else f"session {session_id!r}: "
        raise ValidationError(
            f"{where}{field} must be 1..{MAX_TITLE_CHARS} characters, not only blanks; "
            f"got {text[:40]!r} ({len(text)} characters)",
            session_id=session_id,
        )
    return text


def check_title(session_id: str, title: object) -> str | None:
    """A title: ``None`` (clear it) or 1..:data:`MAX_TITLE_CHARS` characters (META-4)."""
    return None if title is None else _check_title_text(session_id, title, "title")


def check_filter_title(title: object) -> str | None:
    """A listing's title filter: ``None`` or a title-like text (META-6)."""
    return None if title is None else _check_title_text(None, title, "title filter")


def check_expect_version(session_id: str, expect_version: object) -> int | None:
    """An expected metadata version: ``None`` or an integer >= 0 (META-3)."""
    if expect_version is None:
        return None
    if type(expect_version) is not int or expect_version < 0:
        raise ValidationError(
            f"session {session_id!r}: expect_version must be an integer >= 0, "
            f"got {expect_version!r}",
            session_id=session_id,
        )
    return expect_version


def assert_version(session_id: str, expected: int | None, actual: int) -> None:
    """Refuse an update whose expected metadata version is not the session's (META-3)."""
    if expected is not None and expected != actual:
        raise MetadataVersionConflictError(
            f"session {session_id!r}: metadata version is {actual}, not the expected {expected}",
            session_id=session_id,
            expected=expected,
            actual=actual,
        )


def check_redaction(
    session_id: str, target: object, replacement: object, reason: object, actor: object
) -> tuple[int | str, str | None, str, str | None]:
    """A redaction's target (an index >= 0 or a row id), replacement, reason and actor."""
    if type(target) is int:
        if target < 0:
            raise ValidationError(
                f"session {session_id!r}: a row index must be >= 0, got {target}",
                session_id=session_id,
            )
    elif isinstance(target, str):
        check_id(target, "row id", session_id=session_id)
    else:
        raise ValidationError(
            f"session {session_id!r}: a row is named by its index (int) or its id (str), "
            f"got {type(target).__name__}",
            session_id=session_id,
        )
    text = None
    if replacement is not None:
        text = _bounded(session_id, replacement, "replacement", MAX_REPLACEMENT_CHARS, 0)
    why = _bounded(session_id, reason, "reason", MAX_REASON_CHARS, 1)
    who = check_id(actor, "actor", session_id=session_id, optional=True)
    return target, text, why, who


def _bounded(session_id: str, value: object, field: str, most: int, least: int) -> str:
    text = check_text(value, field, session_id=session_id)
    if not least <= len(text) <= most:
        raise ValidationError(
            f"session {session_id!r}: {field} must be {least}..{most} characters, got {len(text)}",
            session_id=session_id,
        )
    return text


def tombstone(row: Message, replacement: str | None) -> Message:
    """The row as redaction leaves it: its role, id and tool call id (a chat row) or kind
    (a context row) kept; its content the replacement or :data:`REDACTED`; every other
    field gone; marked redacted (RED-2)."""
    content = REDACTED if replacement is None else replacement
    if isinstance(row, ContextMessage):
        fields: dict[str, Any] = {"kind": row.kind, "content": content}
        if row.kind == "memory":
            fields["memory_ids"] = []
        return ContextMessage.model_validate({**fields, "metadata": {"redacted": True}})
    kept: dict[str, Any] = {"role": row.role, "content": content}
    if row.id is not None:
        kept["id"] = row.id
    call_id = (row.__pydantic_extra__ or {}).get("tool_call_id")
    if isinstance(call_id, str):
        kept["tool_call_id"] = call_id
    return ChatMessage.model_validate({**kept, "redacted": True})


def is_tombstone(row: Message) -> bool:
    """Whether ``row`` carries redaction's mark."""
    if isinstance(row, ContextMessage):
        return row.metadata == {"redacted": True}
    return (row.__pydantic_extra__ or {}).get("redacted") is True
