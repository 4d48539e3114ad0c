"""helix_agents.core.tracing: a span per store call, refusals, the commit and conflict metrics,
recorded by the OpenTelemetry SDK's in-memory exporter and reader."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
import redis
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from psycopg import sql

from helix_agents.core import (
    ChatMessage,
    MessageCountConflictError,
    SessionStateStore,
    ValidationError,
    open_store,
    session_handle,
)
from helix_agents.core.context import ContextStore
from helix_agents.core.tracing import (
    COMMIT_DURATION,
    CONFLICTS,
    SCOPE,
    TracedContextStore,
    traced,
)
from helix_agents.core.tracing._targets import engine_target
from helix_agents.core.tracing._telemetry import Telemetry
from helix_agents.store_memory import MemoryStateStore

pytestmark = pytest.mark.anyio

SECRET = "zebra-quartz-content"


@dataclass
class Otel:
    """An SDK tracer and meter provider whose spans and metrics the test can read."""

    spans: InMemorySpanExporter
    reader: InMemoryMetricReader
    tracer_provider: TracerProvider
    meter_provider: MeterProvider

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def points(self, name: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        found: list[Any] = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        assert scope.scope.name == SCOPE
                        found += metric.data.data_points
        return found

    def dump(self) -> str:
        """Everything recorded, as text: spans and metrics."""
        data = self.reader.get_metrics_data()
        return "\n".join(s.to_json() for s in self.finished()) + (data.to_json() if data else "")


def _otel() -> Otel:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    return Otel(spans, reader, tracer_provider, MeterProvider(metric_readers=[reader]))


@pytest.fixture
def otel() -> Otel:
    return _otel()


_GLOBAL: Otel | None = None


@pytest.fixture
def global_otel() -> Otel:
    """The process's global providers (settable once), their spans emptied for each test."""
    global _GLOBAL
    if _GLOBAL is None:
        _GLOBAL = _otel()
        trace.set_tracer_provider(_GLOBAL.tracer_provider)
        metrics.set_meter_provider(_GLOBAL.meter_provider)
    _GLOBAL.spans.clear()
    return _GLOBAL


def _traced(otel: Otel, store: SessionStateStore, **options: Any) -> Any:
    return traced(
        store,
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
        **options,
    )


def hello(text: str = "hi") -> ChatMessage:
    return ChatMessage(role="user", content=text)


async def test_a_span_per_call_with_the_database_conventions(otel: Otel) -> None:
    async with _traced(otel, MemoryStateStore(), namespace="unit") as store:
        await store.create_session("s1")
        await store.session("s1").append(hello())
        assert len(await store.get_messages("s1")) == 1
    spans = otel.finished()
    assert [s.name for s in spans] == [
        "create_session unit",
        "append_messages unit",
        "get_messages unit",
    ]
    operations = ["create_session", "append_messages", "get_messages"]
    for span, operation in zip(spans, operations, strict=True):
        assert span.attributes == {
            "db.system.name": "helix.memory",
            "db.namespace": "unit",
            "db.operation.name": operation,
        }
        assert span.kind is SpanKind.INTERNAL  # in-process: no database call
        assert span.status.status_code is StatusCode.UNSET
        assert span.instrumentation_scope is not None
        assert span.instrumentation_scope.name == SCOPE


async def test_refusal_is_an_event_with_its_code_and_an_error_status(otel: Otel) -> None:
    async with _traced(otel, MemoryStateStore()) as store:
        handle = store.session("s1")
        await store.create_session("s1")
        with pytest.raises(MessageCountConflictError):
            await handle.append(hello(), expect_message_count=3)
        with pytest.raises(ValidationError):
            await store.get_messages("s1", limit=-1)
    conflict, invalid = otel.finished()[1:]
    assert conflict.status.status_code is StatusCode.ERROR
    assert conflict.status.description == "state_concurrency_conflict"
    assert conflict.attributes is not None
    assert conflict.attributes["error.type"] == "state_concurrency_conflict"
    (event,) = conflict.events
    assert event.name == "exception"
    assert dict(event.attributes or {}) == {
        "exception.type": "helix_agents.core.errors.MessageCountConflictError",
        "helix.error.code": "state_concurrency_conflict",
        "helix.error.retryable": True,
    }
    assert invalid.status.description == "validation_error"
    assert [dict(e.attributes or {})["helix.error.code"] for e in invalid.events] == [
        "validation_error"
    ]


async def test_commit_histogram_and_conflict_counter(otel: Otel) -> None:
    async with _traced(otel, MemoryStateStore()) as store:
        await store.create_session("s1")
        await store.session("s1").append(hello())
        await store.replace_messages("s1", 0, [hello("b")], expect_message_count=1)
        for _ in range(2):
            with pytest.raises(MessageCountConflictError):
                await store.session("s1").append(hello(), expect_message_count=0)
        await store.get_messages("s1")
    histogram = {
        (p.attributes["db.operation.name"], p.attributes.get("error.type")): p.count
        for p in otel.points(COMMIT_DURATION)
    }
    assert histogram == {
        ("append_messages", None): 1,
        ("replace_messages", None): 1,
        ("append_messages", "state_concurrency_conflict"): 2,
    }
    assert all(p.sum > 0 for p in otel.points(COMMIT_DURATION))
    (conflicts,) = otel.points(CONFLICTS)
    assert conflicts.value == 2
    assert conflicts.attributes["helix.conflict.kind"] == "MessageCountConflictError"
    assert conflicts.attributes["db.operation.name"] == "append_messages"


async def test_no_content_user_or_session_id_is_recorded(otel: Otel) -> None:
    sid = f"sess-{SECRET}-id"
    async with _traced(otel, MemoryStateStore()) as store:
        await store.create_session(sid, user_id=f"user-{SECRET}", metadata={"k": SECRET})
        await store.session(sid).append(hello(SECRET))
        await store.list_sessions(f"user-{SECRET}")
        with pytest.raises(ValidationError) as refused:
            await store.session(sid).append({"role": SECRET, "content": "x"})
    assert SECRET in str(refused.value)  # the message quotes the value: it must stay out
    text = otel.dump()
    assert "append_messages" in text
    assert SECRET not in text


async def test_session_ids_only_when_asked(otel: Otel) -> None:
    async with _traced(otel, MemoryStateStore(), record_session_ids=True) as store:
        await store.create_session("s-visible")
        await store.list_sessions("u")
    create, listing = otel.finished()
    assert create.attributes is not None and listing.attributes is not None
    assert create.attributes["helix.session.id"] == "s-visible"
    assert "helix.session.id" not in listing.attributes


def _protocol_methods() -> list[str]:
    """Every call of both protocols: what a traced store must wrap, a new one included."""
    names = [
        name
        for protocol in (SessionStateStore, ContextStore)
        for name, member in vars(protocol).items()
        if inspect.iscoroutinefunction(member) and not name.startswith("__")
    ]
    return [name for name in names if name != "close"]  # close passes straight through


class Recorder:
    """An inner store that answers each call with what it was called with."""

    def __getattr__(self, name: str) -> Any:
        async def call(*args: Any, **kwargs: Any) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
            return name, args, kwargs

        return call


# The span's session: the first argument, but for these calls.
_NOT_THE_FIRST = {
    "list_sessions": None,
    "list_all_sessions": None,
    "get_user_usage": None,
    "erase_user": None,
    "get_scoped_state": "owner",
    "sweep": None,
}


def test_the_protocols_list_every_call() -> None:
    assert len(_protocol_methods()) == 50  # 43 session calls, 7 context calls


def _protocol_method(name: str) -> Any:
    return getattr(SessionStateStore, name, None) or getattr(ContextStore, name)


def _bound(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments by parameter name, defaults filled in."""
    bound = inspect.signature(_protocol_method(name)).bind(None, *args, **kwargs)
    bound.apply_defaults()
    return dict(list(bound.arguments.items())[1:])


@pytest.mark.parametrize("name", _protocol_methods())
async def test_every_protocol_call_is_traced(otel: Otel, name: str) -> None:
    telemetry = Telemetry(
        "acme",
        "ns",
        record_session_ids=True,
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
    )
    store: Any = TracedContextStore(Recorder(), telemetry)
    wrapper = getattr(TracedContextStore, name)
    assert wrapper is not _protocol_method(name)
    assert wrapper.__doc__ == _protocol_method(name).__doc__
    params = list(inspect.signature(wrapper).parameters.values())[1:]
    positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    args = ("session", "owner", *(f"<{p}>" for p in positional[2:]))[: len(positional)]
    kwargs = {p.name: f"<{p.name}>" for p in params if p.kind is p.KEYWORD_ONLY}
    answer = await getattr(store, name)(*args, **kwargs)
    called, passed, passed_kw = answer
    assert called == name
    assert _bound(name, passed, passed_kw) == _bound(name, args, kwargs)  # passed on unchanged
    (span,) = otel.finished()
    assert span.name == f"{name} ns"
    assert span.attributes is not None
    assert span.attributes["db.operation.name"] == name
    expected = _NOT_THE_FIRST.get(name, "session")
    assert span.attributes.get("helix.session.id") == expected


async def test_the_session_of_a_call_by_keyword_or_of_another_scope(otel: Otel) -> None:
    async with _traced(otel, MemoryStateStore(), record_session_ids=True) as store:
        await store.create_session(session_id="s-kw")
        assert await store.get_message_count(session_id="s-kw") == 0
        assert await store.get_scoped_state(scope="session", owner="s-kw") == {}
        assert await store.get_scoped_state("user", "u1") == {}
        await store.clone_session("s-kw", "s-copy")
    ids = [(s.attributes or {}).get("helix.session.id") for s in otel.finished()]
    assert ids == ["s-kw", "s-kw", "s-kw", None, "s-kw"]


async def test_open_store_tracing_on_sqlite(global_otel: Otel, tmp_path: Path) -> None:
    async with open_store(f"sqlite:///{tmp_path / 'traced.db'}", tracing=True) as store:
        assert isinstance(store, TracedContextStore)
        await store.create_session("s1")
        ref = await store.store_output("s1", "line\n" * 3, tool_name="t")
        assert (await store.read_output("s1", ref.output_id)).total_lines == 3
    spans = global_otel.finished()
    assert [s.attributes["db.operation.name"] for s in spans if s.attributes] == [
        "create_session",
        "store_output",
        "read_output",
    ]
    assert all(s.kind is SpanKind.CLIENT for s in spans)
    assert {s.attributes["db.system.name"] for s in spans if s.attributes} == {"sqlite"}
    assert {s.attributes["db.namespace"] for s in spans if s.attributes} == {
        str(tmp_path / "traced.db")
    }


async def test_sqlite_namespace_is_the_file_the_store_opens(
    global_otel: Otel, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'agent.db'}"
    async with open_store(url, tracing=True, namespace="t1") as store:
        await store.create_session("s1")
    (span,) = global_otel.finished()
    assert span.attributes is not None
    assert span.attributes["db.namespace"] == str(tmp_path / "agent.t1.db")


async def _conflict_on(store: SessionStateStore) -> None:
    """Three calls: create, append, and an append refused with a count conflict."""
    await store.create_session("s1")
    await session_handle(store, "s1").append(hello())
    with pytest.raises(MessageCountConflictError):
        await session_handle(store, "s1").append(hello(), expect_message_count=0)


def _check_server_spans(otel: Otel, system: str, namespace: str) -> None:
    spans = otel.finished()
    assert [s.name for s in spans] == [
        f"create_session {namespace}",
        f"append_messages {namespace}",
        f"append_messages {namespace}",
    ]
    for span in spans:
        assert span.kind is SpanKind.CLIENT
        assert span.attributes is not None
        assert span.attributes["db.system.name"] == system
        assert span.attributes["db.namespace"] == namespace
    assert spans[-1].status.description == "state_concurrency_conflict"
    # The global reader is cumulative over the run: only this system's conflicts count.
    ours = [p for p in otel.points(CONFLICTS) if p.attributes["db.namespace"] == namespace]
    assert [p.value for p in ours] == [1]
    assert ours[0].attributes["db.system.name"] == system


async def test_open_store_tracing_on_postgres(global_otel: Otel, helix_postgres_url: str) -> None:
    schema = f"helix_otel_{uuid.uuid4().hex[:12]}"
    database = psycopg.conninfo.conninfo_to_dict(helix_postgres_url)["dbname"]
    joiner = "&" if "?" in helix_postgres_url else "?"
    url = f"{helix_postgres_url}{joiner}schema={schema}&auto_migrate=true"
    try:
        async with open_store(url, tracing=True) as store:
            await _conflict_on(store)
    finally:
        with psycopg.connect(helix_postgres_url, autocommit=True) as conn:
            drop = sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
            conn.execute(drop)
    _check_server_spans(global_otel, "postgresql", f"{database}.{schema}")


async def test_open_store_tracing_on_redis(global_otel: Otel, helix_redis_url: str) -> None:
    prefix = f"helix-otel-{uuid.uuid4().hex[:12]}"
    try:
        async with open_store(helix_redis_url, tracing=True, key_prefix=prefix) as store:
            await _conflict_on(store)
    finally:
        with redis.Redis.from_url(helix_redis_url) as client:
            for key in client.scan_iter(match=f"{prefix}*"):
                client.delete(key)
    index = helix_redis_url.split("?")[0].rstrip("/").rpartition("/")[2]
    _check_server_spans(global_otel, "redis", index if index.isdigit() else "0")


async def test_open_store_without_tracing_returns_the_store_itself() -> None:
    store = open_store("memory://")
    assert isinstance(store, MemoryStateStore)


def test_traced_keeps_both_protocols_and_the_inner_store(otel: Otel) -> None:
    inner = MemoryStateStore()
    store = traced(inner, tracer_provider=otel.tracer_provider)
    assert store.inner is inner
    assert repr(store).startswith("traced(")
    assert isinstance(store, SessionStateStore) and isinstance(store, ContextStore)


class OutsideStore:
    """A store not built on the engine seam: traced() cannot tell its database."""

    def __init__(self) -> None:
        self._inner = MemoryStateStore()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_a_store_from_outside_the_family_names_its_system(otel: Otel) -> None:
    with pytest.raises(ValidationError, match="system="):
        _traced(otel, OutsideStore())
    with pytest.raises(ValidationError, match="SessionStateStore"):
        traced(object())  # type: ignore[call-overload]
    assert _traced(otel, OutsideStore(), system="acme").inner is not None


@pytest.mark.parametrize(
    ("url", "expected"),
    [("memory://", ("helix.memory", None)), ("memory://shared", ("helix.memory", "shared"))],
)
def test_the_engine_names_system_and_namespace(url: str, expected: tuple[str, str | None]) -> None:
    assert engine_target(open_store(url)) == expected
    assert engine_target(OutsideStore()) == (None, None)


def _python(code: str) -> str:
    # Pydantic plugins installed beside us (the dev venv has logfire's, which imports
    # OpenTelemetry) are the environment's, not ours: only our imports are under test.
    env = {**os.environ, "PYDANTIC_DISABLE_PLUGINS": "__all__"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=env,
    )
    return done.stdout.strip()


def test_opentelemetry_is_never_imported_without_tracing() -> None:
    out = _python(
        "import sys, asyncio\n"
        "from helix_agents.core import open_store\n"
        "async def main():\n"
        "    async with open_store('memory://') as store:\n"
        "        await store.create_session('s')\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    assert json.loads(out.replace("'", '"')) == []


def test_without_opentelemetry_tracing_names_the_extra() -> None:
    out = _python(
        "import sys\n"
        "sys.modules['opentelemetry'] = None  # as if the otel extra were not installed\n"
        "from helix_agents.core import ValidationError, open_store\n"
        "try:\n"
        "    open_store('memory://', tracing=True)\n"
        "except ValidationError as exc:\n"
        "    print(exc.code, exc)\n"
    )
    assert out.startswith("validation_error")
    assert "helix-agents-core[otel]" in out
