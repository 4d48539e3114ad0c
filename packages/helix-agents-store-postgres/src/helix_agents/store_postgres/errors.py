"""Errors of the Postgres store beyond core's (docs/scaling.md, FO-12)::

StoreUnavailableError                 state_unavailable (retryable)
 └── ReplicationLagError              the standby has not applied the store's commits in time
"""

from __future__ import annotations

from helix_agents.core import StoreUnavailableError

__all__ = ["ReplicationLagError"]


class ReplicationLagError(StoreUnavailableError):
    """A read on the standby found the store's own commits not yet applied there within
    ``standby_wait`` (FO-12).

    Nothing was written (``may_have_landed`` is false); retry once the standby
    catches up, or read elsewhere.
    """
