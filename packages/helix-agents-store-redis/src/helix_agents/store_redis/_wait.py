"""``wait_replicas``: after each write, ``WAIT`` for N replicas (docs/scaling.md, FO-3)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from helix_agents.core import ValidationError

from ._config import seconds

__all__ = ["WAIT_TIMEOUT", "NotReplicatedError", "ReplicaWait"]

WAIT_TIMEOUT = 1.0
"""Seconds a write waits for its replicas by default."""


@dataclass(frozen=True, slots=True)
class ReplicaWait:
    """How many replicas must acknowledge each write, and for how long to wait (seconds)."""

    replicas: int
    timeout: float

    @property
    def timeout_ms(self) -> int:
        """The timeout as ``WAIT`` takes it: whole milliseconds, at least 1 (0 waits forever)."""
        return max(1, round(self.timeout * 1000))

    @classmethod
    def build(
        cls, replicas: object, timeout: float | timedelta | None, operation_timeout: float
    ) -> ReplicaWait | None:
        """The checked setting, or ``None`` when no write waits (``replicas`` unset or 0)."""
        if replicas is None:
            if timeout is not None:
                raise ValidationError("wait_timeout needs wait_replicas")
            return None
        if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
            raise ValidationError(f"wait_replicas {replicas!r} is not a whole number of replicas")
        wait = WAIT_TIMEOUT if timeout is None else seconds("wait_timeout", timeout)
        if wait >= operation_timeout:
            raise ValidationError(
                f"wait_timeout {wait!r} must be shorter than "
                f"operation_timeout {operation_timeout!r}"
            )
        return cls(replicas, wait) if replicas else None


class NotReplicatedError(Exception):
    """A write ran on the master, but only ``acked`` replicas had it when ``WAIT`` returned."""

    def __init__(self, acked: int) -> None:
        super().__init__(acked)
        self.acked = acked
