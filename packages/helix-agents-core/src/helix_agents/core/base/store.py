"""``StoreBase``: both protocols written once over an :class:`~helix_agents.core.seam.Engine`."""

from __future__ import annotations

from ..handles import SessionHandles
from ..lifecycle import ClosesOnExit
from ._branches import BranchMethods
from ._context import ContextMethods
from ._expiry import ExpiryMethods
from ._lifecycle import LifecycleMethods
from ._records import RecordMethods
from ._rows import RowMethods
from ._sessions import SessionMethods
from ._usage import UsageMethods

__all__ = ["StoreBase"]


class StoreBase(
    SessionMethods,
    BranchMethods,
    RowMethods,
    RecordMethods,
    ContextMethods,
    LifecycleMethods,
    UsageMethods,
    ExpiryMethods,
    SessionHandles,
    ClosesOnExit,
):
    """Every public method of ``SessionStateStore`` and ``ContextStore``: the open check,
    the order of checks, the rules and the answers, over the engine's primitives.

    ``StoreBase(engine, max_messages=None, clock=utcnow, idle_ttl=None,
    sweep_interval=60, keep_checkpoints=None, checkpoint_ttl=None)``; ``async with``
    opens the engine, ``close()`` closes it. See docs/backends/writing.md and, for the
    expiry options, docs/lifecycle.md.
    """
