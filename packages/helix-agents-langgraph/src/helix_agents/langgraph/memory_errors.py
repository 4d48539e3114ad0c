"""The memory store's own errors (docs/integrations/langgraph.md, LGM-6 and LGM-7)::

    StateStoreError
     ├── ValidationError                      validation_error
     │    └── MemoryKeyError                  (also LangGraph's InvalidNamespaceError)
     └── SemanticSearchUnsupportedError       langgraph_semantic_search (also NotImplementedError)

A bad value is the saver's :class:`~helix_agents.langgraph.UnstorableValueError`; a sync
call on the store's loop its :class:`~helix_agents.langgraph.EventLoopError`.
"""

from __future__ import annotations

from langgraph.store.base import InvalidNamespaceError

from helix_agents.core.errors import StateStoreError, ValidationError

__all__ = ["MemoryKeyError", "SemanticSearchUnsupportedError"]


class MemoryKeyError(ValidationError, InvalidNamespaceError):
    """A namespace or key the memory store refuses; nothing was written (LGM-6).

    ``field`` is ``"namespace"`` or ``"key"``.
    """

    def __init__(self, message: str, *, session_id: str | None = None, field: str = "") -> None:
        super().__init__(message, session_id=session_id)
        self.field = field


class SemanticSearchUnsupportedError(StateStoreError, NotImplementedError):
    """An ``index`` (embeddings) configuration: the memory store has no vector search (LGM-7)."""

    code = "langgraph_semantic_search"
