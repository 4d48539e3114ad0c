"""helix-agents core: the session store protocol, its types, errors and ``open_store``.

This is the API for users of a store: what an agent loop needs. The rest of the
user API lives in public modules named for what they hold: every error class in
:mod:`helix_agents.core.errors`, every model and type alias in
:mod:`helix_agents.core.models` and :mod:`helix_agents.core.messages`, the limits
in :mod:`helix_agents.core.limits`, the runtime helpers in
:mod:`helix_agents.core.runtime`. Backend authors find the engine seam and the
shared rules in :mod:`helix_agents.core.backend`.
"""

from .errors import (
    ConcurrencyConflictError,
    MessageCountConflictError,
    RunSupersededError,
    SessionExistsError,
    SessionNotFoundError,
    StateStoreError,
    StoreUnavailableError,
    ValidationError,
    is_retryable,
)
from .handles import SessionHandle, session_handle
from .messages import ChatMessage, ContextItem, ContextMessage, JsonObject, Message
from .models import (
    Checkpoint,
    CommitResult,
    ContextItemDelivery,
    LateAnswer,
    LateAnswerDelivery,
    MessageCommit,
    MessagePage,
    PendingApproval,
    RecordResult,
    ScopedStateDelta,
    SessionInfo,
    SessionsPage,
    StartRun,
    StoredContextItem,
)
from .protocol import SessionStateStore
from .registry import open_store
from .runtime import deliver_context_items, deliver_late_answer_notices, lower_context_rows

__all__ = [
    "ChatMessage",
    "Checkpoint",
    "CommitResult",
    "ConcurrencyConflictError",
    "ContextItem",
    "ContextItemDelivery",
    "ContextMessage",
    "JsonObject",
    "LateAnswer",
    "LateAnswerDelivery",
    "Message",
    "MessageCommit",
    "MessageCountConflictError",
    "MessagePage",
    "PendingApproval",
    "RecordResult",
    "RunSupersededError",
    "ScopedStateDelta",
    "SessionExistsError",
    "SessionHandle",
    "SessionInfo",
    "SessionNotFoundError",
    "SessionStateStore",
    "SessionsPage",
    "StartRun",
    "StateStoreError",
    "StoreUnavailableError",
    "StoredContextItem",
    "ValidationError",
    "deliver_context_items",
    "deliver_late_answer_notices",
    "is_retryable",
    "lower_context_rows",
    "open_store",
    "session_handle",
]
