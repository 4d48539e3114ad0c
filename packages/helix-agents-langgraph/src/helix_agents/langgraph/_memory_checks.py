"""Every op of a batch checked before any runs (LGM-6): a refused batch writes nothing."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    Op,
    PutOp,
    SearchOp,
    validate_op_namespace,
)

from helix_agents.core.errors import ValidationError
from helix_agents.core.inputs import check_json

from ._memory_layout import KEY_MARK, SEP, id_fits
from ._memory_match import OPERATORS
from .errors import UnstorableValueError
from .memory_errors import MemoryKeyError

__all__ = ["check_ops"]


def check_ops(ops: Iterable[Op], session_id: str) -> list[Op]:
    """``ops`` as a list, each checked; the first refusal raises."""
    checked = list(ops)
    for op in checked:
        _check(op, session_id)
    return checked


def _check(op: Op, sid: str) -> None:
    try:
        validate_op_namespace(op)
    except InvalidNamespaceError as exc:
        raise MemoryKeyError(f"memory {sid!r}: {exc}", session_id=sid, field="namespace") from None
    if isinstance(op, GetOp | PutOp):
        _check_item(op.namespace, op.key, sid, put=isinstance(op, PutOp))
        if isinstance(op, PutOp):
            _check_value(op, sid)
    elif isinstance(op, SearchOp):
        _check_labels(op.namespace_prefix, sid)
        _check_page(op.limit, op.offset, sid)
        if op.filter is not None:
            _check_filter(op.filter, sid)
        if op.query is not None and not isinstance(op.query, str):
            raise ValidationError(f"memory {sid!r}: query {op.query!r} is not text", session_id=sid)
    elif isinstance(op, ListNamespacesOp):
        for condition in op.match_conditions or ():
            if condition.match_type not in ("prefix", "suffix"):
                raise ValidationError(
                    f"memory {sid!r}: match type {condition.match_type!r} is not prefix or suffix",
                    session_id=sid,
                )
            _check_labels(tuple(label for label in condition.path if label != "*"), sid)
        _check_page(op.limit, op.offset, sid)
        depth = op.max_depth
        if depth is not None and (type(depth) is not int or depth < 1):
            raise ValidationError(
                f"memory {sid!r}: max_depth {depth!r} is not a positive int", session_id=sid
            )
    else:
        raise ValidationError(f"memory {sid!r}: unknown op {type(op).__name__}", session_id=sid)


def _check_labels(labels: tuple[str, ...], sid: str) -> None:
    for label in labels:
        if SEP in label or KEY_MARK in label:
            raise MemoryKeyError(
                f"memory {sid!r}: namespace label {label!r} holds U+001E or U+001F",
                session_id=sid,
                field="namespace",
            )


def _check_item(namespace: tuple[str, ...], key: Any, sid: str, *, put: bool) -> None:
    if put and (not namespace or namespace[0] == "langgraph"):
        raise MemoryKeyError(
            f"memory {sid!r}: namespace {namespace!r} is empty or starts with 'langgraph'",
            session_id=sid,
            field="namespace",
        )
    _check_labels(namespace, sid)
    if type(key) is not str or not key or SEP in key or KEY_MARK in key:
        raise MemoryKeyError(
            f"memory {sid!r}: key {key!r} is not a non-empty string without U+001E or U+001F",
            session_id=sid,
            field="key",
        )
    if not id_fits(namespace, key):
        raise MemoryKeyError(
            f"memory {sid!r}: namespace {namespace!r} and key {key[:40]!r}… are longer than "
            "an id holds (512 bytes with the version)",
            session_id=sid,
            field="key",
        )


def _check_value(op: PutOp, sid: str) -> None:
    value = op.value
    if value is not None:
        if type(value) is not dict:
            raise UnstorableValueError(
                f"memory {sid!r}: the value of {op.key!r} is a {type(value).__name__}, not a dict",
                session_id=sid,
                field=op.key,
            )
        try:
            check_json(value, f"value of {op.key!r}", session_id=sid)
        except ValidationError as exc:
            raise UnstorableValueError(exc.message, session_id=sid, field=op.key) from None
        _no_tuples(value, op.key, sid)
    ttl = op.ttl
    if ttl is not None and (type(ttl) not in (int, float) or not math.isfinite(ttl) or ttl <= 0):
        raise ValidationError(
            f"memory {sid!r}: ttl {ttl!r} is not a positive number of minutes", session_id=sid
        )


def _no_tuples(value: Any, key: str, sid: str) -> None:
    """Tuples read back as lists: refused, so a value comes back exactly."""
    if isinstance(value, tuple):
        raise UnstorableValueError(
            f"memory {sid!r}: the value of {key!r} holds a tuple, which would read back as a list",
            session_id=sid,
            field=key,
        )
    if isinstance(value, dict):
        for item in value.values():
            _no_tuples(item, key, sid)
    elif isinstance(value, list):
        for item in value:
            _no_tuples(item, key, sid)


def _check_page(limit: Any, offset: Any, sid: str) -> None:
    for name, number in (("limit", limit), ("offset", offset)):
        if type(number) is not int or number < 0:
            raise ValidationError(
                f"memory {sid!r}: {name} {number!r} is not an int >= 0", session_id=sid
            )


def _check_filter(wanted: Mapping[str, Any], sid: str) -> None:
    for name, want in wanted.items():
        if isinstance(want, dict):
            unknown = [op for op in want if op.startswith("$") and op not in OPERATORS]
            if unknown:
                raise ValidationError(
                    f"memory {sid!r}: filter {name!r} uses {unknown[0]!r}; "
                    f"known: {sorted(OPERATORS)}",
                    session_id=sid,
                )
            _check_filter({k: v for k, v in want.items() if not k.startswith("$")}, sid)
