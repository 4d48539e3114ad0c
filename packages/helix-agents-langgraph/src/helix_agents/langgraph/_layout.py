"""Where a LangGraph thread's data lives in its session: one checkpoint record per item.

A thread is the session of the same id. Its records are store checkpoints
(``message_count`` 0) whose ids spell out what they hold, so that each read
LangGraph makes is one page of ids under a prefix (docs/integrations/langgraph.md):

* ``c␟<ns>␟<checkpoint id>`` — a checkpoint of namespace ``ns``;
* ``p␟<ns>␟<parent id>`` — the claim of the one child that extends a parent;
* ``w␟<ns>␟<checkpoint id>␟<task id>␟<idx>`` — a pending write.

``␟`` is U+001F (unit separator); a namespace, checkpoint id or task id that
contains it is refused.
"""

from __future__ import annotations

from helix_agents.core import ValidationError
from helix_agents.core.inputs import check_id

__all__ = [
    "ALL_CHECKPOINTS",
    "ALL_CLAIMS",
    "ALL_WRITES",
    "SEP",
    "claim_key",
    "checkpoint_key",
    "namespace_prefix",
    "parse_checkpoint_key",
    "parse_claim_key",
    "parse_write_key",
    "write_key",
    "writes_prefix",
]

SEP = "\x1f"
ALL_CHECKPOINTS = f"c{SEP}"
ALL_CLAIMS = f"p{SEP}"
ALL_WRITES = f"w{SEP}"


def _part(value: object, what: str) -> str:
    if not isinstance(value, str) or SEP in value:
        shown = repr(value) if isinstance(value, str) else type(value).__name__
        raise ValidationError(f"{what} must be a string without U+001F, got {shown[:80]}")
    return value


def _key(key: str) -> str:
    """``key`` if the store takes it as a checkpoint id (at most ``MAX_ID_BYTES``, …)."""
    return check_id(key, "the record id of this checkpoint or write")


def namespace_prefix(ns: str) -> str:
    """The prefix of every checkpoint of namespace ``ns``."""
    return f"c{SEP}{_part(ns, 'checkpoint_ns')}{SEP}"


def checkpoint_key(ns: str, checkpoint_id: str) -> str:
    """The record of one checkpoint."""
    return _key(namespace_prefix(ns) + _part(checkpoint_id, "checkpoint_id"))


def claim_key(ns: str, parent_id: str) -> str:
    """The record that names the one child of ``parent_id``."""
    return _key(f"p{SEP}{_part(ns, 'checkpoint_ns')}{SEP}{_part(parent_id, 'checkpoint_id')}")


def writes_prefix(ns: str, checkpoint_id: str) -> str:
    """The prefix of every pending write of one checkpoint."""
    return f"w{SEP}{_part(ns, 'checkpoint_ns')}{SEP}{_part(checkpoint_id, 'checkpoint_id')}{SEP}"


def write_key(ns: str, checkpoint_id: str, task_id: str, idx: int) -> str:
    """The record of one pending write."""
    return _key(f"{writes_prefix(ns, checkpoint_id)}{_part(task_id, 'task_id')}{SEP}{idx}")


def parse_checkpoint_key(key: str) -> tuple[str, str] | None:
    """``(ns, checkpoint id)`` of a checkpoint record's id; ``None`` if not this layout."""
    parts = key.split(SEP)
    if len(parts) != 3 or parts[0] != "c" or not parts[2]:
        return None
    return parts[1], parts[2]


def parse_claim_key(key: str) -> tuple[str, str] | None:
    """``(ns, parent id)`` of a claim record's id; ``None`` if not this layout."""
    parts = key.split(SEP)
    if len(parts) != 3 or parts[0] != "p" or not parts[2]:
        return None
    return parts[1], parts[2]


def parse_write_key(key: str) -> tuple[str, str, str, int] | None:
    """``(ns, checkpoint id, task id, idx)`` of a write record's id; ``None`` if not this layout."""
    parts = key.split(SEP)
    if len(parts) != 5 or parts[0] != "w" or not parts[2]:
        return None
    try:
        idx = int(parts[4])
    except ValueError:
        return None
    return (parts[1], parts[2], parts[3], idx) if str(idx) == parts[4] else None
