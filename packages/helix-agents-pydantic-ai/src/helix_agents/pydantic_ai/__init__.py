"""pydantic-ai message history on any helix-agents session store.

:class:`HelixHistory` loads a conversation's ``ModelMessage`` list for
``agent.run(message_history=...)`` and saves a run's new messages in one commit that
fails if another run saved first (docs/integrations/pydantic-ai.md).
"""

from helix_agents.core.adapters import CorruptMessageError, MessageNotStorableError

from ._rows import MESSAGE_FIELD
from .history import ADAPTER, HelixHistory

__all__ = [
    "ADAPTER",
    "MESSAGE_FIELD",
    "CorruptMessageError",
    "HelixHistory",
    "MessageNotStorableError",
]
