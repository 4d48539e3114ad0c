"""``HelixFlowPersistence`` on the four backends (docs/integrations/crewai.md, CRW-1..CRW-7)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from crewai.flow.async_feedback.types import PendingFeedbackContext
from crewai.flow.flow import Flow, FlowState, listen, start
from crewai.flow.persistence import persist
from pydantic import BaseModel

from helix_agents.core import Checkpoint, ValidationError
from helix_agents.core.adapters import ADAPTER_KEY, mark
from helix_agents.core.errors import ApprovalNotFoundError, ForeignSessionError
from helix_agents.crewai import (
    MAX_STATE_BYTES,
    CorruptFlowStateError,
    EventLoopError,
    FlowStateError,
    HelixFlowPersistence,
)


def _context(
    flow: str, method: str = "review", message: str = "Approve?"
) -> PendingFeedbackContext:
    return PendingFeedbackContext(
        flow_id=flow,
        flow_class="tests.ReviewFlow",
        method_name=method,
        method_output={"draft": "text"},
        message=message,
        emit=["approved", "rejected"],
    )


def _checkpoint_ids(p: HelixFlowPersistence, flow: str) -> list[str]:
    return [c.checkpoint_id for c in p.call(lambda s: s.list_checkpoints(flow))]


class Counted(BaseModel):
    id: str = "f"
    count: int = 0
    when: datetime = datetime(2026, 1, 2, tzinfo=UTC)
    tags: set[str] = {"a"}


def test_crw1_the_latest_save_is_what_loads(persistence: HelixFlowPersistence) -> None:
    assert persistence.load_state("f") is None
    for n in range(5):
        persistence.save_state("f", f"step{n}", {"id": "f", "n": n})
    assert persistence.load_state("f") == {"id": "f", "n": 4}
    assert len(_checkpoint_ids(persistence, "f")) == 5
    info = persistence.call(lambda s: s.get_session("f"))
    assert info is not None and info.metadata[ADAPTER_KEY] == "crewai"


def test_crw1_a_model_state_is_saved_as_crewai_saves_it(persistence: HelixFlowPersistence) -> None:
    persistence.save_state("f", "start", Counted(count=3))
    assert persistence.load_state("f") == {
        "id": "f",
        "count": 3,
        "when": "2026-01-02T00:00:00Z",
        "tags": ["a"],
    }


def test_crw1_another_persistence_reads_the_latest(
    persistence: HelixFlowPersistence, other: HelixFlowPersistence
) -> None:
    persistence.save_state("f", "a", {"v": 1})
    other.save_state("f", "b", {"v": 2})
    assert persistence.load_state("f") == other.load_state("f") == {"v": 2}


def test_crw3_pending_feedback_round_trips_and_clears(persistence: HelixFlowPersistence) -> None:
    assert persistence.load_pending_feedback("f") is None
    persistence.save_pending_feedback("f", _context("f"), {"id": "f", "draft": 1})
    loaded = persistence.load_pending_feedback("f")
    assert loaded is not None
    state, context = loaded
    assert state == {"id": "f", "draft": 1} and persistence.load_state("f") == state
    assert context.to_dict() == _context("f").to_dict() | {
        "requested_at": context.requested_at.isoformat()
    }
    assert context.method_name == "review" and context.emit == ["approved", "rejected"]
    persistence.clear_pending_feedback("f")
    assert persistence.load_pending_feedback("f") is None
    assert persistence.pending_feedback("f") == []
    assert persistence.load_state("f") == {"id": "f", "draft": 1}


def test_crw4_a_pending_feedback_is_listed_and_decided_once_from_another_process(
    persistence: HelixFlowPersistence, other: HelixFlowPersistence
) -> None:
    persistence.save_pending_feedback("f", _context("f"), {"id": "f"})
    persistence.save_state("g", "start", {"id": "g"})
    assert other.pending_flows() == ["f"]
    [asked] = other.pending_feedback("f")
    assert asked.tool_call_id == "review" and asked.input == {
        "message": "Approve?",
        "method_output": {"draft": "text"},
    }
    assert persistence.decided_feedback("f") is None
    results = []
    barrier = threading.Barrier(4)

    def decide(p: HelixFlowPersistence, text: str) -> None:
        barrier.wait()
        results.append((p.decide_feedback("f", asked.approval_id, text), text))

    threads = [
        threading.Thread(target=decide, args=(p, f"ok {i}"))
        for i, p in enumerate([persistence, other] * 2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    won = [text for result, text in results if result == "resolved"]
    assert len(won) == 1 and sorted(r for r, _ in results).count("already-resolved") == 3
    assert persistence.decided_feedback("f") == won[0]
    assert other.pending_feedback("f") == [] and other.pending_flows() == []
    # The flow resumes with it (CrewAI calls clear after resume): nothing pending is left.
    assert persistence.load_pending_feedback("f") is not None
    persistence.clear_pending_feedback("f")
    assert persistence.load_pending_feedback("f") is None
    assert persistence.decided_feedback("f") is None


def test_crw4_an_unknown_approval_is_a_typed_error_and_writes_nothing(
    persistence: HelixFlowPersistence,
) -> None:
    persistence.save_pending_feedback("f", _context("f"), {"id": "f"})
    before = _checkpoint_ids(persistence, "f")
    with pytest.raises(ApprovalNotFoundError) as caught:
        persistence.decide_feedback("f", "crewai-feedback:nope", "yes")
    assert caught.value.session_id == "f"
    assert _checkpoint_ids(persistence, "f") == before


def test_crw4_clear_resolves_an_undecided_feedback(persistence: HelixFlowPersistence) -> None:
    persistence.save_pending_feedback("f", _context("f"), {"id": "f"})
    [asked] = persistence.pending_feedback("f")
    persistence.clear_pending_feedback("f")
    assert persistence.pending_feedback("f") == []
    assert persistence.decide_feedback("f", asked.approval_id, "late") == "already-resolved"


def test_crw5_calls_from_a_running_event_loop_and_from_threads(
    persistence: HelixFlowPersistence,
) -> None:
    async def inside_a_loop() -> dict[str, Any] | None:
        # As CrewAI calls it in kickoff_async: synchronously, on the caller's loop thread.
        persistence.save_state("f", "async", {"v": "loop"})
        return persistence.load_state("f")

    assert asyncio.run(inside_a_loop()) == {"v": "loop"}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            persistence.save_state(f"t{i}", "thread", {"v": i})
            assert persistence.load_state(f"t{i}") == {"v": i}
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_crw5_a_flow_persists_through_kickoff_and_kickoff_async(
    persistence: HelixFlowPersistence,
) -> None:
    class State(FlowState):
        count: int = 0

    @persist(persistence)
    class Counter(Flow[State]):
        @start()
        def first(self) -> None:
            self.state.count += 1

        @listen(first)
        async def second(self) -> None:
            self.state.count += 10

    flow = Counter()
    flow.kickoff()
    assert persistence.load_state(flow.state.id) == {"id": flow.state.id, "count": 11}

    async def again() -> int:
        resumed = Counter()
        await resumed.kickoff_async(inputs={"id": flow.state.id})
        return int(resumed.state.count)

    assert asyncio.run(again()) == 22
    assert persistence.load_state(flow.state.id) == {"id": flow.state.id, "count": 22}


def test_crw5_a_closed_persistence_refuses_calls(stores: Any) -> None:
    p = HelixFlowPersistence(stores.store("main"))
    p.close()
    p.close()
    with pytest.raises(EventLoopError) as caught:
        p.load_state("f")
    assert caught.value.code == "crewai_event_loop"


@pytest.mark.parametrize(
    ("state", "why"),
    [
        ({"x": float("nan")}, "not a JSON number"),
        ({"x": "\ud800"}, "lone surrogate"),
        ({"\udfff": 1}, "lone surrogate"),
        ({"x": 10**700}, "digits"),
        ("not a dict", "must be a dict"),
    ],
)
def test_crw2_a_state_that_is_not_storable_is_refused_and_writes_nothing(
    persistence: HelixFlowPersistence, state: Any, why: str
) -> None:
    persistence.save_state("f", "ok", {"v": 1})
    before = _checkpoint_ids(persistence, "f")
    saves: list[Callable[[], object]] = [
        lambda: persistence.save_state("f", "bad", state),
        lambda: persistence.save_pending_feedback("f", _context("f"), state),
    ]
    for save in saves:
        with pytest.raises(FlowStateError) as caught:
            save()
        assert caught.value.code == "validation_error" and caught.value.session_id == "f"
        assert why in str(caught.value) and "'f'" in str(caught.value)
    assert _checkpoint_ids(persistence, "f") == before
    assert persistence.load_state("f") == {"v": 1} and persistence.pending_feedback("f") == []


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize(("depth", "why"), [(99, "deeper than 100"), (100_000, "too deep")])
def test_crw2_a_deeply_nested_state_is_refused(
    persistence: HelixFlowPersistence, depth: int, why: str
) -> None:
    with pytest.raises(FlowStateError) as caught:
        persistence.save_state("deep", "m", _nested(depth))
    assert why in str(caught.value) and caught.value.session_id == "deep"
    assert persistence.load_state("deep") is None
    assert persistence.call(lambda s: s.get_session("deep")) is None


def test_crw2_a_state_at_the_depth_limit_comes_back(persistence: HelixFlowPersistence) -> None:
    # 99 levels: the checkpoint that holds it is the 100th.
    persistence.save_state("deep", "m", _nested(98))
    assert persistence.load_state("deep") == _nested(98)


def test_crw2_a_huge_state_within_the_limit_comes_back_one_over_is_refused(
    persistence: HelixFlowPersistence,
) -> None:
    big = {"blob": "x" * (8 * 1024 * 1024), "rows": [{"i": i} for i in range(20_000)]}
    persistence.save_state("big", "m", big)
    assert persistence.load_state("big") == big
    with pytest.raises(FlowStateError) as caught:
        persistence.save_state("big", "m", {"blob": "y" * MAX_STATE_BYTES})
    assert "bytes of JSON" in str(caught.value) and caught.value.session_id == "big"
    assert persistence.load_state("big") == big


@pytest.mark.parametrize(
    "flow",
    ["", "x" * 10_000, "a\x00b", "\ud800", "ok\udfff"],
    ids=["empty", "10KB", "NUL", "lone-surrogate", "trailing-surrogate"],
)
def test_crw2_odd_flow_ids_are_refused_by_every_method(
    persistence: HelixFlowPersistence, flow: str
) -> None:
    calls: list[Callable[[], object]] = [
        lambda: persistence.save_state(flow, "m", {"v": 1}),
        lambda: persistence.load_state(flow),
        lambda: persistence.save_pending_feedback(flow, _context("x"), {"v": 1}),
        lambda: persistence.load_pending_feedback(flow),
        lambda: persistence.clear_pending_feedback(flow),
        lambda: persistence.pending_feedback(flow),
        lambda: persistence.decide_feedback(flow, "a", "b"),
        lambda: persistence.decided_feedback(flow),
    ]
    for call in calls:
        with pytest.raises(FlowStateError) as caught:
            call()
        assert caught.value.code == "validation_error" and "flow_uuid" in str(caught.value)
    page = persistence.call(lambda s: s.list_all_sessions())
    assert page.sessions == ()


@pytest.mark.parametrize("flow", ["é-ünïcode-流", "x" * 512, "with spaces / slashes:colons"])
def test_crw2_unusual_but_valid_flow_ids_work(persistence: HelixFlowPersistence, flow: str) -> None:
    persistence.save_pending_feedback(flow, _context(flow), {"v": flow})
    assert persistence.load_state(flow) == {"v": flow}
    assert persistence.pending_flows() == [flow]


@pytest.mark.parametrize(
    "held",
    [None, "text", {"method": "m"}, {"state": [1, 2]}],
    ids=["null", "text", "no-state", "list-state"],
)
def test_crw6_a_corrupt_stored_state_is_a_typed_error_naming_the_flow(
    persistence: HelixFlowPersistence, held: Any
) -> None:
    persistence.save_state("f", "m", {"v": 1})
    bad = Checkpoint(
        checkpoint_id="crewai-state:99999999999999999999",
        run_id="crewai-flow",
        message_count=0,
        state=held,
        created_at=datetime.now(UTC),
    )
    persistence.call(lambda s: s.save_checkpoint("f", bad))
    with pytest.raises(CorruptFlowStateError) as caught:
        persistence.load_state("f")
    assert caught.value.session_id == "f" and caught.value.checkpoint_id == bad.checkpoint_id
    assert "'f'" in str(caught.value) and caught.value.code == "validation_error"


def test_crw6_a_corrupt_feedback_context_is_a_typed_error(
    persistence: HelixFlowPersistence,
) -> None:
    persistence.save_state("f", "m", {"v": 1})
    bad = Checkpoint(
        checkpoint_id="crewai-feedback:99999999999999999999",
        run_id="crewai-flow",
        message_count=0,
        state={"state": {}, "context": {"message": "no flow_id"}},
        created_at=datetime.now(UTC),
    )
    persistence.call(lambda s: s.save_checkpoint("f", bad))
    with pytest.raises(CorruptFlowStateError) as caught:
        persistence.load_pending_feedback("f")
    assert caught.value.checkpoint_id == bad.checkpoint_id and "flow_id" in str(caught.value)


def test_crw7_a_foreign_session_is_missing_and_refuses_writes(
    persistence: HelixFlowPersistence,
) -> None:
    persistence.call(lambda s: s.create_session("f", metadata=mark("langgraph")))
    assert persistence.load_state("f") is None and persistence.load_pending_feedback("f") is None
    assert persistence.pending_feedback("f") == []
    writes: list[Callable[[], object]] = [
        lambda: persistence.save_state("f", "m", {"v": 1}),
        lambda: persistence.save_pending_feedback("f", _context("f"), {"v": 1}),
    ]
    for write in writes:
        with pytest.raises(ForeignSessionError):
            write()
    assert _checkpoint_ids(persistence, "f") == []


def test_crw7_a_shared_session_is_written_and_read(persistence: HelixFlowPersistence) -> None:
    persistence.call(lambda s: s.create_session("f", metadata={"team": "x"}))
    persistence.save_state("f", "m", {"v": 1})
    assert persistence.load_state("f") == {"v": 1}


def test_crw5_a_persistence_crewai_rebuilds_from_a_flows_json_reopens_its_store(
    tmp_path: Path,
) -> None:
    with HelixFlowPersistence(f"sqlite:///{tmp_path / 'flows.db'}") as persistence:
        persistence.save_state("f", "m", {"v": 1})
        dumped = persistence.model_dump(mode="json")
    assert dumped == {
        "persistence_type": "HelixFlowPersistence",
        "store_url": f"sqlite:///{tmp_path / 'flows.db'}",
        "user_id": None,
    }
    with HelixFlowPersistence.model_validate(dumped) as rebuilt:
        assert rebuilt.load_state("f") == {"v": 1}


def test_crw5_the_url_a_flows_json_holds_has_no_password(postgres_schema_url: str) -> None:
    # Trust auth ignores the password: the store opens, and its URL is kept redacted.
    parts = urlsplit(postgres_schema_url)
    user = parts.username or "postgres"
    url = urlunsplit(parts._replace(netloc=f"{user}:s3cret@{parts.hostname}:{parts.port}"))
    with HelixFlowPersistence(url) as persistence:
        dumped = persistence.model_dump_json()
        assert persistence.load_state("nobody") is None
    assert "s3cret" not in dumped and persistence.store_url is not None
    assert persistence.store_url.startswith(f"postgresql://{user}:")


def test_crw5_a_store_or_a_url_one_of_them(stores: Any) -> None:
    with pytest.raises(ValidationError, match="one of them"):
        HelixFlowPersistence()
    with pytest.raises(ValidationError, match="one of them"):
        HelixFlowPersistence(stores.store("main"), store_url="memory://")
