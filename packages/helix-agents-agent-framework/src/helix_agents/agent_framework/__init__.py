"""Microsoft Agent Framework chat history on any helix-agents session store.

:class:`HelixHistoryProvider` is a ``HistoryProvider``: an agent given it loads each
session's messages before a run and saves the run's messages after, in one commit that
fails if another run saved first (docs/integrations/agent-framework.md).
"""

from helix_agents.core.adapters import CorruptMessageError, MessageNotStorableError

from ._rows import MESSAGE_FIELD
from .history import ADAPTER, COUNT_KEY, HelixHistoryProvider

__all__ = [
    "ADAPTER",
    "COUNT_KEY",
    "MESSAGE_FIELD",
    "CorruptMessageError",
    "HelixHistoryProvider",
    "MessageNotStorableError",
]
