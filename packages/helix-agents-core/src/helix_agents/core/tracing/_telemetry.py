"""The OpenTelemetry side of a traced store: one span per call, the commit histogram and
the conflict counter. Only this module imports ``opentelemetry``."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from importlib.metadata import version
from time import perf_counter
from typing import TypeVar

from opentelemetry import metrics, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from ..errors import ConcurrencyConflictError, StateStoreError

__all__ = ["COMMIT_DURATION", "CONFLICTS", "COMMITS", "SCOPE", "Telemetry"]

_T = TypeVar("_T")

SCOPE = "helix_agents.core.tracing"
"""The instrumentation scope of every span and instrument."""
COMMIT_DURATION = "helix.store.commit.duration"
"""Histogram (seconds) of each commit, refused ones included (``error.type`` set)."""
CONFLICTS = "helix.store.conflicts"
"""Counter of the calls refused with a :class:`ConcurrencyConflictError`."""
COMMITS = frozenset({"append_messages", "replace_messages"})
"""The operations the commit histogram times: the two that land rows with a commit's checks."""

# The database semantic conventions (stable since semconv 1.33): db.system.name replaced
# db.system; db.namespace and db.operation.name replaced db.name and db.operation.
DB_SYSTEM_NAME = "db.system.name"
DB_NAMESPACE = "db.namespace"
DB_OPERATION_NAME = "db.operation.name"
ERROR_TYPE = "error.type"
SESSION_ID = "helix.session.id"
# Semconv's advice for db.client.operation.duration, in seconds.
_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0)
_SCHEMA_URL = "https://opentelemetry.io/schemas/1.33.0"


class Telemetry:
    """Spans and metrics for one store, its attributes computed once per operation."""

    __slots__ = (
        "_attrs",
        "_base",
        "_commit_duration",
        "_conflicts",
        "_kind",
        "_session_ids",
        "_suffix",
        "_tracer",
    )

    def __init__(
        self,
        system: str,
        namespace: str | None,
        *,
        record_session_ids: bool,
        tracer_provider: trace.TracerProvider | None,
        meter_provider: metrics.MeterProvider | None,
    ) -> None:
        ours = version("helix-agents-core")
        self._tracer = trace.get_tracer(SCOPE, ours, tracer_provider, schema_url=_SCHEMA_URL)
        meter = metrics.get_meter(SCOPE, ours, meter_provider, schema_url=_SCHEMA_URL)
        self._commit_duration = meter.create_histogram(
            COMMIT_DURATION,
            unit="s",
            description="Duration of store commits (append_messages, replace_messages).",
            explicit_bucket_boundaries_advisory=_BUCKETS,
        )
        self._conflicts = meter.create_counter(
            CONFLICTS,
            unit="{conflict}",
            description="Store calls refused because another writer changed the session first.",
        )
        # An in-memory store makes no call to a database: semconv allows INTERNAL for it.
        self._kind = SpanKind.INTERNAL if system == "helix.memory" else SpanKind.CLIENT
        self._base: dict[str, str] = {DB_SYSTEM_NAME: system}
        if namespace is not None:
            self._base[DB_NAMESPACE] = namespace
        self._suffix = "" if namespace is None else f" {namespace}"
        self._attrs: dict[str, Mapping[str, str]] = {}
        self._session_ids = record_session_ids

    def _attributes(self, operation: str) -> Mapping[str, str]:
        attrs = self._attrs.get(operation)
        if attrs is None:
            attrs = self._attrs[operation] = {**self._base, DB_OPERATION_NAME: operation}
        return attrs

    async def run(self, operation: str, session_id: str | None, call: Awaitable[_T]) -> _T:
        """Await ``call`` inside the span of ``operation``; record its refusal, if any."""
        attrs = self._attributes(operation)
        with self._tracer.start_as_current_span(
            operation + self._suffix,
            kind=self._kind,
            attributes=attrs,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            if self._session_ids and session_id is not None:
                span.set_attribute(SESSION_ID, session_id)
            start = perf_counter()
            try:
                result = await call
            except Exception as exc:
                code = self._refused(span, attrs, exc)
                if operation in COMMITS:
                    self._commit_duration.record(
                        perf_counter() - start, {**attrs, ERROR_TYPE: code}
                    )
                raise
            if operation in COMMITS:
                self._commit_duration.record(perf_counter() - start, attrs)
            return result

    def _refused(self, span: trace.Span, attrs: Mapping[str, str], exc: Exception) -> str:
        # The message is never recorded: it may quote the refused value (message content).
        kind = type(exc)
        name = f"{kind.__module__}.{kind.__qualname__}"
        code = exc.code if isinstance(exc, StateStoreError) else name
        span.set_attribute(ERROR_TYPE, code)
        span.add_event(
            "exception",
            {
                "exception.type": name,
                "helix.error.code": code,
                "helix.error.retryable": isinstance(exc, StateStoreError) and exc.retryable,
            },
        )
        span.set_status(Status(StatusCode.ERROR, code))
        if isinstance(exc, ConcurrencyConflictError):
            self._conflicts.add(
                1, {**attrs, ERROR_TYPE: code, "helix.conflict.kind": kind.__name__}
            )
        return code
