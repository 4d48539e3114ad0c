"""Errors of the Redis store beyond core's (docs/scaling.md)::

StoreUnavailableError                 state_unavailable (retryable)
 └── ReplicationLagError              the write landed on the master; too few replicas have it
"""

from __future__ import annotations

from helix_agents.core import StoreUnavailableError

__all__ = ["ReplicationLagError"]


class ReplicationLagError(StoreUnavailableError):
    """Fewer replicas than ``wait_replicas`` acknowledged a write within ``wait_timeout`` (FO-3).

    The write is on the master (``may_have_landed`` is true) and may not survive
    its loss; retry with the same ``commit_id`` once replicas catch up.
    """
