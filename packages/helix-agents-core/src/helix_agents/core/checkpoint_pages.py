"""Paged checkpoint reads and deletes: the input rules every backend shares (CKP-3..CKP-5).

A page holds the checkpoints whose id starts with ``prefix`` and sorts below
``before``, greatest id first. Ids compare by code point, which is the order
of their UTF-8 bytes, so every backend serves a page from its index on
``(session, checkpoint_id)`` with one range scan.
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import ValidationError
from .inputs import check_id
from .rules import check_limit

__all__ = [
    "MAX_CHECKPOINT_PAGE",
    "CheckpointRange",
    "check_checkpoint_ids",
    "checkpoint_range",
]

MAX_CHECKPOINT_PAGE = 500
"""The largest page of checkpoints, and the most ids one delete may name."""

_LAST_CODE_POINT = 0x10FFFF


class CheckpointRange:
    """The ids of a page: ``low <= id < high`` (``high`` ``None``: no upper bound)."""

    __slots__ = ("high", "limit", "low")

    def __init__(self, low: str, high: str | None, limit: int) -> None:
        self.low = low
        self.high = high
        self.limit = limit

    @property
    def empty(self) -> bool:
        """Whether no id can fall in the range."""
        return self.high is not None and self.high <= self.low

    def __contains__(self, checkpoint_id: object) -> bool:
        return (
            isinstance(checkpoint_id, str)
            and checkpoint_id >= self.low
            and (self.high is None or checkpoint_id < self.high)
        )


def _after_prefix(prefix: str) -> str | None:
    """The least string above every string that starts with ``prefix`` (``None``: none is)."""
    while prefix:
        following = ord(prefix[-1]) + 1
        if following == 0xD800:  # surrogates are not storable: skip them
            following = 0xE000
        if following <= _LAST_CODE_POINT:
            return prefix[:-1] + chr(following)
        prefix = prefix[:-1]
    return None


def checkpoint_range(
    session_id: str, prefix: str, before: str | None, limit: int
) -> CheckpointRange:
    """Check a page request and turn it into an id range; a bad value is a ValidationError."""
    if not isinstance(prefix, str):
        raise ValidationError(
            f"session {session_id!r}: prefix must be a string, got {type(prefix).__name__}",
            session_id=session_id,
        )
    if prefix:
        check_id(prefix, "prefix", session_id=session_id)
    if before is not None:
        check_id(before, "before", session_id=session_id)
    check_limit(session_id, "limit", limit, 1, MAX_CHECKPOINT_PAGE)
    high = _after_prefix(prefix)
    if before is not None and (high is None or before < high):
        high = before
    return CheckpointRange(prefix, high, limit)


def check_checkpoint_ids(session_id: str, checkpoint_ids: Sequence[str]) -> list[str]:
    """The distinct ids of a delete, in order; at most MAX_CHECKPOINT_PAGE, each a valid id."""
    if isinstance(checkpoint_ids, str) or not isinstance(checkpoint_ids, Sequence):
        raise ValidationError(
            f"session {session_id!r}: checkpoint_ids must be a sequence of ids, "
            f"got {type(checkpoint_ids).__name__}",
            session_id=session_id,
        )
    if len(checkpoint_ids) > MAX_CHECKPOINT_PAGE:
        raise ValidationError(
            f"session {session_id!r}: {len(checkpoint_ids)} checkpoint ids in one delete; "
            f"at most {MAX_CHECKPOINT_PAGE}",
            session_id=session_id,
        )
    ids = [check_id(cid, "checkpoint_id", session_id=session_id) for cid in checkpoint_ids]
    return list(dict.fromkeys(ids))
