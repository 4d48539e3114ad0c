"""The traced stores: every protocol call of the wrapped store, each inside its span.

Each protocol method is one delegating wrapper, built by :func:`_traced` from the
protocol's own method: the span is named after it, and its session is the call's
first argument unless the table below says otherwise. The wrappers keep the
protocol's signatures for type checkers, since each is typed as the method it wraps.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Generic, Protocol, Self, TypeVar, cast

from ..context.protocol import ContextStore
from ..handles import SessionHandles
from ..protocol import SessionStateStore
from ._telemetry import Telemetry

__all__ = ["FullStore", "TracedContextStore", "TracedStore"]


class FullStore(SessionStateStore, ContextStore, Protocol):
    """A store with both protocols, as every store of the family is."""


S = TypeVar("S", bound=SessionStateStore)
C = TypeVar("C", bound=FullStore)
_M = TypeVar("_M", bound=Callable[..., Coroutine[Any, Any, Any]])

SessionOf = Callable[[tuple[Any, ...], dict[str, Any]], "str | None"]
"""The session a call is about, from its arguments (``helix.session.id``), or ``None``."""


def _no_session(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """A call about no session (``list_sessions``: its argument is a user id)."""
    return None


def _scoped_owner(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """``get_scoped_state``: the owner when the scope is ``session``."""
    named = dict(zip(("scope", "owner"), args, strict=False), **kwargs)
    return named.get("owner") if named.get("scope") == "session" else None


def _traced(method: _M, session_of: SessionOf | None = None) -> _M:
    """The wrapper of protocol ``method``: the inner store's method inside its span.

    The span's session is the first argument (by position or by name) unless
    ``session_of`` picks it.
    """
    operation = method.__name__
    first = list(inspect.signature(method).parameters)[1]

    @functools.wraps(method)
    async def call(self: TracedStore[Any], *args: Any, **kwargs: Any) -> Any:
        if session_of is None:
            session_id = args[0] if args else kwargs.get(first)
        else:
            session_id = session_of(args, kwargs)
        inner = getattr(self._inner, operation)(*args, **kwargs)
        return await self._t.run(operation, session_id, inner)

    return cast(_M, call)


class TracedStore(SessionHandles, SessionStateStore, Generic[S]):
    """``inner`` with a span around each call; a :class:`SessionStateStore` itself.

    Opening and closing pass straight through. ``session(id)`` handles call
    the traced store, so their calls are traced too.
    """

    __slots__ = ("_inner", "_t")

    def __init__(self, inner: S, telemetry: Telemetry) -> None:
        self._inner = inner
        self._t = telemetry

    def __repr__(self) -> str:
        return f"traced({self._inner!r})"

    @property
    def inner(self) -> S:
        """The wrapped store, for what is not in the protocol (``migrate()``, ``path``, …)."""
        return self._inner

    async def __aenter__(self) -> Self:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._inner.__aexit__(exc_type, exc, tb)

    async def close(self) -> None:
        """Close the wrapped store."""
        await self._inner.close()

    create_session = _traced(SessionStateStore.create_session)
    get_session = _traced(SessionStateStore.get_session)
    delete_session = _traced(SessionStateStore.delete_session)
    clear_session = _traced(SessionStateStore.clear_session)
    clone_session = _traced(SessionStateStore.clone_session)  # the source session
    list_sessions = _traced(SessionStateStore.list_sessions, _no_session)
    get_scoped_state = _traced(SessionStateStore.get_scoped_state, _scoped_owner)
    append_messages = _traced(SessionStateStore.append_messages)
    get_messages = _traced(SessionStateStore.get_messages)
    get_message_count = _traced(SessionStateStore.get_message_count)
    get_ui_message_count = _traced(SessionStateStore.get_ui_message_count)
    page_messages = _traced(SessionStateStore.page_messages)
    truncate_messages = _traced(SessionStateStore.truncate_messages)
    pop_messages = _traced(SessionStateStore.pop_messages)
    replace_messages = _traced(SessionStateStore.replace_messages)
    is_truncated = _traced(SessionStateStore.is_truncated)
    finish_run = _traced(SessionStateStore.finish_run)
    record_context_item = _traced(SessionStateStore.record_context_item)
    list_undelivered_context_items = _traced(SessionStateStore.list_undelivered_context_items)
    record_late_answer = _traced(SessionStateStore.record_late_answer)
    list_undelivered_late_answers = _traced(SessionStateStore.list_undelivered_late_answers)
    add_pending_approvals = _traced(SessionStateStore.add_pending_approvals)
    list_pending_approvals = _traced(SessionStateStore.list_pending_approvals)
    resolve_approval = _traced(SessionStateStore.resolve_approval)
    save_checkpoint = _traced(SessionStateStore.save_checkpoint)
    get_checkpoint = _traced(SessionStateStore.get_checkpoint)
    latest_checkpoint = _traced(SessionStateStore.latest_checkpoint)
    list_checkpoints = _traced(SessionStateStore.list_checkpoints)
    page_checkpoints = _traced(SessionStateStore.page_checkpoints)
    delete_checkpoints = _traced(SessionStateStore.delete_checkpoints)


class TracedContextStore(TracedStore[C], ContextStore):
    """A :class:`TracedStore` of a store that also keeps outputs and history (ContextStore)."""

    __slots__ = ()

    store_output = _traced(ContextStore.store_output)
    get_output = _traced(ContextStore.get_output)
    read_output = _traced(ContextStore.read_output)
    grep_output = _traced(ContextStore.grep_output)
    record_compaction = _traced(ContextStore.record_compaction)
    get_window = _traced(ContextStore.get_window)
    search_history = _traced(ContextStore.search_history)
