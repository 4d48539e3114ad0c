"""The saver's records as JSON: built whole before any write, read back or refused by name.

A checkpoint record holds ``ns``, ``id``, ``parent``, ``checkpoint`` (the
checkpoint without its channel values), ``values`` (one encoded value per
channel) and ``metadata``; a write record ``task``, ``path``, ``idx``, ``channel``
and ``value``. Building one refuses, with :class:`UnstorableValueError`, what
would not come back exactly (ADP-4, ADP-5); reading one that is not what the
saver wrote raises :class:`CorruptRecordError` naming the thread and the record
(ADP-6).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, TypeVar

from pydantic import JsonValue

from helix_agents.core import ValidationError
from helix_agents.core.inputs import check_json

from ._layout import parse_checkpoint_key, parse_write_key
from ._values import JsonValues, RefusedError
from .errors import CorruptRecordError, UnstorableValueError

__all__ = ["PendingWrite", "Records", "StoredCheckpoint"]

_T = TypeVar("_T")


class StoredCheckpoint(NamedTuple):
    """A checkpoint record read back."""

    key: str
    ns: str
    id: str
    parent: str | None
    checkpoint: dict[str, Any]  # with its channel values
    metadata: dict[str, Any]


class PendingWrite(NamedTuple):
    """A write record read back."""

    path: str
    task: str
    idx: int
    channel: str
    value: Any


class Records:
    """Builds and reads the saver's records with one :class:`JsonValues`."""

    def __init__(self, values: JsonValues) -> None:
        self.values = values

    def _dump(self, thread: str, what: str, value: Any, depth: int) -> JsonValue:
        try:
            return self.values.dump(value, depth)
        except RefusedError as exc:
            raise UnstorableValueError(
                f"thread {thread!r}: {what}{exc.path}: {exc.reason}", session_id=thread, field=what
            ) from None

    def checkpoint_state(
        self,
        thread: str,
        checkpoint_id: str,
        ns: str,
        parent: str | None,
        checkpoint: Mapping[str, Any],
        metadata: Any,
    ) -> JsonValue:
        """The record of a checkpoint; ``UnstorableValueError`` names what it refuses."""
        channels = checkpoint.get("channel_values")
        if not isinstance(channels, dict):
            raise ValidationError(
                f"thread {thread!r}: checkpoint {checkpoint_id!r} has no channel_values dict",
                session_id=thread,
            )
        rest = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        values: dict[str, JsonValue] = {}
        for channel, value in channels.items():
            what = f"channel {_name(channel)}"
            _check_name(thread, what, channel)
            values[channel] = self._dump(thread, what, value, 2)
        if not isinstance(metadata, dict):
            raise ValidationError(f"thread {thread!r}: metadata must be a dict", session_id=thread)
        state: JsonValue = {
            "ns": ns,
            "id": checkpoint_id,
            "parent": parent,
            "checkpoint": self._dump(thread, "checkpoint", rest, 1),
            "values": values,
            "metadata": self._dump(thread, "metadata", metadata, 1),
        }
        return _storable(thread, "checkpoint", state)

    def write_state(
        self, thread: str, task: str, path: str, idx: int, channel: Any, value: Any
    ) -> JsonValue:
        """The record of one pending write."""
        what = f"write to channel {_name(channel)} of task {task!r}"
        _check_name(thread, what, channel)
        _check_name(thread, "task_path", path)
        state: JsonValue = {
            "task": task,
            "path": path,
            "idx": idx,
            "channel": channel,
            "value": self._dump(thread, what, value, 1),
        }
        return _storable(thread, what, state)

    def checkpoint(self, thread: str, key: str, state: JsonValue) -> StoredCheckpoint:
        """The checkpoint record ``key`` holds, or ``CorruptRecordError``."""

        def read() -> StoredCheckpoint:
            record = _object(state)
            ns, cid, parent = record["ns"], record["id"], record["parent"]
            if parse_checkpoint_key(key) != (ns, cid):
                raise ValueError("its ns and id are not those of its record id")
            if parent is not None and not isinstance(parent, str):
                raise ValueError("its parent is not a string")
            checkpoint = _object(self.values.load(record["checkpoint"]))
            channels = _object(record["values"])
            checkpoint["channel_values"] = {k: self.values.load(v) for k, v in channels.items()}
            metadata = _object(self.values.load(record["metadata"]))
            return StoredCheckpoint(key, str(ns), str(cid), parent, checkpoint, metadata)

        return _reading(thread, key, read)

    def write(self, thread: str, key: str, state: JsonValue) -> PendingWrite | None:
        """The write record ``key`` holds; ``None`` if ``key`` is not a write's id (ADP-3)."""
        parsed = parse_write_key(key)
        if parsed is None:
            return None

        def read() -> PendingWrite:
            record = _object(state)
            task, path, idx, channel = (record[k] for k in ("task", "path", "idx", "channel"))
            if (task, idx) != parsed[2:] or type(idx) is not int:
                raise ValueError("its task and idx are not those of its record id")
            if not isinstance(path, str) or not isinstance(channel, str):
                raise ValueError("its path or channel is not a string")
            return PendingWrite(path, task, idx, channel, self.values.load(record["value"]))

        return _reading(thread, key, read)

    def run_of(self, state: JsonValue) -> tuple[str, str | None] | None:
        """``(run id, parent)`` of a checkpoint record with a ``run_id``; ``None`` if none or
        unreadable (deleting a thread never fails on a corrupt record)."""
        try:
            record = _object(state)
            run = _object(self.values.load(record["metadata"])).get("run_id")
            parent = record.get("parent")
        except Exception:
            return None
        if run is None:
            return None
        return str(run), parent if isinstance(parent, str) else None


def _name(channel: Any) -> str:
    return repr(channel)[:80] if isinstance(channel, str) else f"<{type(channel).__name__}>"


def _check_name(thread: str, what: str, name: Any) -> None:
    try:
        check_json(name, what, session_id=thread)
    except ValidationError as exc:
        raise UnstorableValueError(exc.message, session_id=thread, field=what) from None
    if not isinstance(name, str):
        raise UnstorableValueError(
            f"thread {thread!r}: {what}: the name must be a string, got {type(name).__name__}",
            session_id=thread,
            field=what,
        )


def _storable(thread: str, what: str, state: JsonValue) -> JsonValue:
    """``state`` if core's rules take it; the encoder keeps to them, this makes sure first."""
    try:
        return check_json(state, what, session_id=thread)  # type: ignore[no-any-return]
    except ValidationError as exc:
        raise UnstorableValueError(exc.message, session_id=thread, field=what) from None


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"expected an object, got {type(value).__name__}")
    return value


def _reading(thread: str, key: str, read: Callable[[], _T]) -> _T:
    try:
        return read()
    except Exception as exc:  # whatever the record holds, the error names it
        raise CorruptRecordError(
            f"thread {thread!r}: the record {key!r} cannot be read back "
            f"({type(exc).__name__}: {str(exc)[:200]})",
            session_id=thread,
            record=key,
        ) from exc
