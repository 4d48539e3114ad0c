"""OpenTelemetry for any session store: ``traced(store)`` or ``open_store(url, tracing=True)``.

Needs the ``otel`` extra (``pip install 'helix-agents-core[otel]'``); nothing
else in core imports OpenTelemetry. Each protocol call becomes one span named
``{db.operation.name} {db.namespace}`` with the database semantic-convention
attributes; a refusal sets ``error.type`` to its code, adds an ``exception``
event with the code and sets the status to ERROR. Commits feed the
``helix.store.commit.duration`` histogram and conflicts the
``helix.store.conflicts`` counter. Message content, error messages and user ids
are never recorded; session ids only with ``record_session_ids=True``.
See docs/observability.md.
"""

from __future__ import annotations

try:
    from opentelemetry import metrics, trace
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "helix_agents.core.tracing needs OpenTelemetry: pip install 'helix-agents-core[otel]'"
    ) from exc

from typing import Any, TypeVar, overload

from ..context.protocol import ContextStore
from ..errors import ValidationError
from ..protocol import SessionStateStore
from ._stores import FullStore, TracedContextStore, TracedStore
from ._targets import engine_target
from ._telemetry import COMMIT_DURATION, COMMITS, CONFLICTS, SCOPE, Telemetry

__all__ = [
    "COMMITS",
    "COMMIT_DURATION",
    "CONFLICTS",
    "SCOPE",
    "FullStore",
    "TracedContextStore",
    "TracedStore",
    "traced",
]

S = TypeVar("S", bound=SessionStateStore)
C = TypeVar("C", bound=FullStore)


@overload
def traced(
    store: C,
    *,
    system: str | None = None,
    namespace: str | None = None,
    record_session_ids: bool = False,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
) -> TracedContextStore[C]: ...


@overload
def traced(
    store: S,
    *,
    system: str | None = None,
    namespace: str | None = None,
    record_session_ids: bool = False,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
) -> TracedStore[S]: ...


def traced(
    store: SessionStateStore,
    *,
    system: str | None = None,
    namespace: str | None = None,
    record_session_ids: bool = False,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
) -> TracedStore[Any]:
    """``store`` with a span around each call, and the commit and conflict metrics.

    ``system`` (``db.system.name``) and ``namespace`` (``db.namespace``) default to
    what the store's engine names (docs/backends/writing.md); a store not built on
    the engine seam must name its system, and its namespace is left out unless given. The global
    providers are used unless ``tracer_provider`` / ``meter_provider`` are given.
    """
    if not isinstance(store, SessionStateStore):
        raise ValidationError(f"traced() needs a SessionStateStore, not {type(store).__name__}")
    known, named = engine_target(store)
    system = system or known
    namespace = namespace if namespace is not None else named
    if system is None:
        raise ValidationError(
            f"traced() cannot tell the database of {type(store).__name__}: pass system='…' "
            "(its db.system.name, e.g. 'postgresql')"
        )
    telemetry = Telemetry(
        system,
        namespace,
        record_session_ids=record_session_ids,
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
    )
    if isinstance(store, ContextStore):
        return TracedContextStore(store, telemetry)
    return TracedStore(store, telemetry)
