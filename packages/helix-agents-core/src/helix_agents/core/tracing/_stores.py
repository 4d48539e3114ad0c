"""The traced stores: every protocol call of the wrapped store, each inside its span.

Each protocol method is one delegating wrapper, built by :func:`_traced` from the
protocol's own method: the span is named after it, and its session is the call's
first argument unless the table below says otherwise. Each wrapper is typed as the
method it wraps, so type checkers see the protocol's signatures.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine
from typing import Any, Generic, Protocol, Self, TypeVar, cast

from ..context.protocol import ContextStore
from ..handles import SessionHandles
from ..protocol import SessionStateStore
from ._telemetry import Telemetry

__all__ = ["FullStore", "TracedContextStore", "TracedStore"]


class FullStore(SessionStateStore, ContextStore, Protocol):
    """A store with both protocols, as every store of the family is."""


_SCOPED_OWNER = 'owner if scope == "session" else None'
"""The session of ``get_scoped_state``: the owner of a ``session`` map, else none."""

S = TypeVar("S", bound=SessionStateStore)
C = TypeVar("C", bound=FullStore)
_M = TypeVar("_M", bound=Callable[..., Coroutine[Any, Any, Any]])


def _traced(method: _M, session: str | None = None) -> _M:
    """The wrapper of protocol ``method``: the inner store's method inside its span.

    Compiled from the method's signature, as :mod:`dataclasses` compiles an
    ``__init__``: the same parameters and defaults, passed on as given, so a
    traced call costs what a hand-written wrapper does. ``session`` is the
    expression (over the parameters) of the span's session; the first
    parameter by default.
    """
    operation = method.__name__
    params = list(inspect.signature(method).parameters.values())[1:]
    namespace: dict[str, object] = {}
    declared, passed = ["self"], []
    for p in params:
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            raise TypeError(f"{operation}: cannot trace a {p.kind.description} parameter")
        if p.kind is p.KEYWORD_ONLY and "*" not in declared:
            declared.append("*")
        if p.default is not p.empty:
            namespace[f"_{p.name}"] = p.default
        declared.append(p.name if p.default is p.empty else f"{p.name}=_{p.name}")
        passed.append(p.name if p.kind is p.POSITIONAL_OR_KEYWORD else f"{p.name}={p.name}")
    source = (
        f"async def {operation}({', '.join(declared)}):\n"
        f"    call = self._inner.{operation}({', '.join(passed)})\n"
        f"    return await self._t.run({operation!r}, {session or params[0].name}, call)\n"
    )
    exec(source, namespace)
    wrapper = cast(Callable[..., Any], namespace[operation])
    return cast(_M, functools.wraps(method)(wrapper))


class TracedStore(SessionHandles, SessionStateStore, Generic[S]):
    """``inner`` with a span around each call; a :class:`SessionStateStore` itself.

    Opening and closing pass straight through: entering and leaving ``async with``
    are the wrapped store's own. ``session(id)`` handles call the traced store, so their calls
    are traced too.
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

    async def __aexit__(self, *exc_info: Any) -> None:
        await self._inner.__aexit__(*exc_info)

    async def close(self) -> None:
        """Close the wrapped store."""
        await self._inner.close()

    create_session = _traced(SessionStateStore.create_session)
    get_session = _traced(SessionStateStore.get_session)
    delete_session = _traced(SessionStateStore.delete_session)
    clear_session = _traced(SessionStateStore.clear_session)
    clone_session = _traced(SessionStateStore.clone_session)  # the source session
    fork_session = _traced(SessionStateStore.fork_session)  # the source session
    list_branches = _traced(SessionStateStore.list_branches)
    list_sessions = _traced(SessionStateStore.list_sessions, session="None")  # a user id: never
    list_all_sessions = _traced(SessionStateStore.list_all_sessions, session="None")
    get_scoped_state = _traced(SessionStateStore.get_scoped_state, session=_SCOPED_OWNER)
    update_session_metadata = _traced(SessionStateStore.update_session_metadata)
    set_session_title = _traced(SessionStateStore.set_session_title)
    redact_message = _traced(SessionStateStore.redact_message)
    list_redactions = _traced(SessionStateStore.list_redactions)
    get_usage = _traced(SessionStateStore.get_usage)
    get_user_usage = _traced(SessionStateStore.get_user_usage, session="None")
    erase_user = _traced(SessionStateStore.erase_user, session="None")  # a user id: never
    set_session_expiry = _traced(SessionStateStore.set_session_expiry)
    get_session_expiry = _traced(SessionStateStore.get_session_expiry)
    sweep = _traced(SessionStateStore.sweep, session="None")
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
