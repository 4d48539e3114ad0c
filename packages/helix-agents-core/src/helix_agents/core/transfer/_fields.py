"""Checking the fields of an export file's records, one by one (docs/export.md, EXP-7)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

import pydantic

from ..errors import ValidationError
from ..inputs import check_id
from ..messages import JsonObject, describe, parse_message
from ..models import RunInfo
from ..seam import StoredRow

__all__ = [
    "FieldError",
    "at_field",
    "delivered_field",
    "get_field",
    "head_fields",
    "id_field",
    "index_field",
    "keys_field",
    "model_field",
    "no_constant",
    "row_field",
]

_M = TypeVar("_M", bound=pydantic.BaseModel)


class FieldError(Exception):
    """A record's field that is not right: its name (``None``: the line) and why."""

    def __init__(self, field: str | None, why: str) -> None:
        super().__init__(why)
        self.field = field
        self.why = why


def get_field(record: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    if key not in record:
        raise FieldError(key, "missing")
    value = record[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _types(kind)):
        raise FieldError(key, f"{value!r} is not of the expected type")
    return value


def id_field(record: dict[str, Any], key: str, *, optional: bool = False) -> str | None:
    value = record.get(key) if optional else get_field(record, key, str)
    try:
        return check_id(value, key, optional=optional)
    except ValidationError as exc:
        raise FieldError(key, exc.message) from None


def keys_field(record: dict[str, Any], key: str) -> JsonObject:
    values: JsonObject = get_field(record, key, dict)
    for name in values:
        try:
            check_id(name, key)
        except ValidationError as exc:
            raise FieldError(key, exc.message) from None
    return values


def no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _types(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def model_field(record: dict[str, Any], key: str, model: type[_M]) -> _M:
    try:
        return model.model_validate(get_field(record, key, dict))
    except pydantic.ValidationError as exc:
        raise FieldError(key, describe(exc)) from None


def row_field(record: dict[str, Any], key: str) -> StoredRow:
    try:
        return parse_message(get_field(record, key, dict))
    except ValidationError as exc:
        raise FieldError(key, exc.message) from None


def at_field(record: dict[str, Any], key: str) -> datetime:
    try:
        at = datetime.fromisoformat(get_field(record, key, str))
    except ValueError:
        raise FieldError(key, f"{record[key]!r} is not an ISO 8601 time") from None
    if at.tzinfo is None:
        raise FieldError(key, f"{record[key]!r} has no UTC offset")
    return at


def index_field(record: dict[str, Any], key: str) -> int:
    value = get_field(record, key, int)
    if value < 0:
        raise FieldError(key, f"{value} is negative")
    return int(value)


def delivered_field(record: dict[str, Any]) -> int | None:
    return None if record.get("delivered") is None else index_field(record, "delivered")


def head_fields(r: dict[str, Any]) -> dict[str, Any]:
    """The checked fields of a ``session`` record."""
    run = r.get("run")
    run_ids = get_field(r, "run_ids", list)
    for rid in run_ids:
        try:
            check_id(rid, "run_ids")
        except ValidationError as exc:
            raise FieldError("run_ids", exc.message) from None
    return {
        "session": id_field(r, "session"),
        "user_id": id_field(r, "user_id", optional=True),
        "metadata": get_field(r, "metadata", dict),
        "created_at": at_field(r, "created_at"),
        "last_activity_at": at_field(r, "last_activity_at"),
        "message_count": index_field(r, "message_count"),
        "first_index": index_field(r, "first_index"),
        "ui_count": index_field(r, "ui_count"),
        "run": None if run is None else model_field(r, "run", RunInfo),
        "run_ids": run_ids,
        "preserved": get_field(r, "preserved", bool),
        "scoped": keys_field(r, "scoped"),
    }
