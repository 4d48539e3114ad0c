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

__all__ = [
    "ALL_CHECKPOINTS",
    "ALL_CLAIMS",
    "ALL_WRITES",
    "SEP",
    "claim_key",
    "checkpoint_key",
    "namespace_prefix",
    "write_key",
    "writes_prefix",
]

SEP = "\x1f"
ALL_CHECKPOINTS = f"c{SEP}"
ALL_CLAIMS = f"p{SEP}"
ALL_WRITES = f"w{SEP}"


def _part(value: object, what: str) -> str:
    if not isinstance(value, str) or SEP in value:
        raise ValidationError(f"{what} must be a string without U+001F, got {value!r}")
    return value


def namespace_prefix(ns: str) -> str:
    """The prefix of every checkpoint of namespace ``ns``."""
    return f"c{SEP}{_part(ns, 'checkpoint_ns')}{SEP}"


def checkpoint_key(ns: str, checkpoint_id: str) -> str:
    """The record of one checkpoint."""
    return namespace_prefix(ns) + _part(checkpoint_id, "checkpoint_id")


def claim_key(ns: str, parent_id: str) -> str:
    """The record that names the one child of ``parent_id``."""
    return f"p{SEP}{_part(ns, 'checkpoint_ns')}{SEP}{_part(parent_id, 'checkpoint_id')}"


def writes_prefix(ns: str, checkpoint_id: str) -> str:
    """The prefix of every pending write of one checkpoint."""
    return f"w{SEP}{_part(ns, 'checkpoint_ns')}{SEP}{_part(checkpoint_id, 'checkpoint_id')}{SEP}"


def write_key(ns: str, checkpoint_id: str, task_id: str, idx: int) -> str:
    """The record of one pending write."""
    return f"{writes_prefix(ns, checkpoint_id)}{_part(task_id, 'task_id')}{SEP}{idx}"
