"""CS: the context store — stored outputs, compactions and history search (docs/rules.md)."""

from __future__ import annotations

import asyncio
import hashlib
import time
from typing import Any, ClassVar, cast

import pytest

from helix_agents.core import (
    ChatMessage,
    ConcurrencyConflictError,
    MessageCountConflictError,
    RunSupersededError,
    SessionNotFoundError,
    SessionStateStore,
    StateStoreError,
    StoreUnavailableError,
    ValidationError,
)
from helix_agents.core.context import (
    Compaction,
    ContextStore,
    InvalidPatternError,
    OutputNotFoundError,
)

from ._base import Capabilities, StoreFactory, rule
from ._helpers import assistant, commit, snapshot, start, user

LOG = "".join(f"step {i}: compiled unit_{i} ok\n" for i in range(1, 3001))


def ctx(store: SessionStateStore) -> ContextStore:
    """The store's context protocol; every store of the family implements it."""
    assert isinstance(store, ContextStore), f"{type(store).__name__} lacks the context protocol"
    return cast(ContextStore, store)


def tool_call(call_id: str, name: str, arguments: str) -> ChatMessage:
    """An assistant row calling one tool."""
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    return ChatMessage(role="assistant", content=None, tool_calls=[call])


def tool_result(call_id: str, name: str, text: str) -> ChatMessage:
    """The tool row answering ``call_id``."""
    return ChatMessage(role="tool", content=text, tool_call_id=call_id, name=name)


def said(text: str) -> ChatMessage:
    """A user row whose id is its text: a replacement carries it again by that id."""
    return ChatMessage(role="user", content=text, id=text)


async def hits(store: SessionStateStore, sid: str, grep: str) -> list[tuple[int, str, bool]]:
    """``(index, line, archived)`` of every history hit for ``grep``, newest first."""
    found = await ctx(store).search_history(sid, grep=grep, limit=200)
    return [(h.index, h.line, h.archived) for h in found.hits]


async def grown(store: SessionStateStore, rows: int) -> str:
    """A session holding ``rows`` user rows whose text names their index."""
    sid = (await store.create_session()).id
    await store.append_messages(sid, commit(*(user(f"row {i}") for i in range(rows))))
    return sid


async def replaced_rows_are_archived(store: SessionStateStore) -> None:
    """CS-19 without retention: what an archiving replace archives, and what it does not."""
    sid = (await store.create_session()).id
    await store.append_messages(sid, commit(*(said(f"row {i}") for i in range(6))))
    # Row 2 is carried again by its id; rows 3..5 are cut and archived, unpreserved.
    done = await store.replace_messages(
        sid, 2, [said("row 2"), user("sum 3-5")], expect_message_count=6, archive=True
    )
    assert (done.first_index, done.message_count) == (2, 4)
    assert not (await ctx(store).get_window(sid)).preserved
    assert await hits(store, sid, "^(row|sum)") == [
        (3, "sum 3-5", False),
        (2, "row 2", False),
        (1, "row 1", False),
        (0, "row 0", False),
        (5, "row 5", True),
        (4, "row 4", True),
        (3, "row 3", True),
    ]
    # The same indexes again: the archive is a sequence, index 3 is in it twice.
    await store.replace_messages(sid, 2, [user("sum 2-5")], expect_message_count=4, archive=True)
    assert await hits(store, sid, "^(row [23]|sum)") == [
        (2, "sum 2-5", False),
        (3, "sum 3-5", True),
        (2, "row 2", True),
        (3, "row 3", True),
    ]
    # archive=False, the default, archives nothing.
    await store.replace_messages(sid, 1, [user("plain")], expect_message_count=3)
    assert await hits(store, sid, "^(row 1|sum 2-5)$") == []
    # A refused replacement archives nothing, whatever refused it.
    await store.append_messages(sid, commit(start_run=start("r1")))
    before, archived = await snapshot(store, sid), await hits(store, sid, ".")
    refusals: list[tuple[type[StateStoreError], dict[str, Any]]] = [
        (MessageCountConflictError, {"expect_message_count": 9}),
        (RunSupersededError, {"expect_message_count": 2, "fence_run_id": "other"}),
        (ValidationError, {"expect_message_count": 2, "archive": "yes"}),
        (ValidationError, {"expect_message_count": 2, "archive": 1}),
    ]
    for error, call in refusals:
        with pytest.raises(error) as refused:
            await store.replace_messages(sid, 0, [user("x")], **{"archive": True, **call})
        assert refused.value.session_id == sid
        assert await snapshot(store, sid) == before
        assert await hits(store, sid, ".") == archived


async def retention_archives_an_index_again(store: SessionStateStore) -> None:
    """CS-19 under retention (``max_messages=4``): an index archived twice collides with
    nothing."""
    sid = (await store.create_session()).id
    await store.append_messages(sid, commit(*(said(f"a{i}") for i in range(3))))
    await ctx(store).record_compaction(sid, Compaction(boundary=1, summary="s"))
    await store.replace_messages(
        sid, 1, [said("b1"), said("b2")], expect_message_count=3, archive=True
    )
    # Retention archives indexes 0 and 1: index 1 is archived a second time.
    await store.append_messages(sid, commit(*(said(f"c{i}") for i in range(3, 6))))
    assert await store.is_truncated(sid)
    assert await hits(store, sid, "^[abc]") == [
        (5, "c5", False),
        (4, "c4", False),
        (3, "c3", False),
        (2, "b2", False),
        (1, "b1", True),
        (0, "a0", True),
        (2, "a2", True),
        (1, "a1", True),
    ]
    await store.clear_session(sid)
    assert await hits(store, sid, ".") == []


class ContextRules:
    """CS-1..CS-12 and CS-19."""

    capabilities: ClassVar[Capabilities]

    @rule("CS-1")
    async def test_CS_1_store_output_reference(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        before = (await store.get_session(sid)).last_activity_at  # type: ignore[union-attr]
        text = "αβγ\n" + LOG
        ref = await ctx(store).store_output(sid, text, tool_name="make")
        again = await ctx(store).store_output(sid, text, tool_name="make")
        assert ref.output_id != again.output_id
        assert (ref.chars, ref.lines) == (len(text), 3001)
        assert ref.sha256 == hashlib.sha256(text.encode()).hexdigest()
        assert ref.tool_name == "make" and not ref.replayed
        assert await ctx(store).get_output(sid, ref.output_id) == ref
        after = (await store.get_session(sid)).last_activity_at  # type: ignore[union-attr]
        assert after > before
        empty = await ctx(store).store_output(sid, "")
        assert (empty.chars, empty.lines) == (0, 0)
        snap = await snapshot(store, sid)
        for bad in ("bad \ud800 surrogate", b"bytes", None):
            with pytest.raises(ValidationError):
                await ctx(store).store_output(sid, bad)  # type: ignore[arg-type]
        with pytest.raises(ValidationError):
            await ctx(store).store_output(sid, "x", key="")
        assert await snapshot(store, sid) == snap
        with pytest.raises(SessionNotFoundError):
            await ctx(store).store_output("missing", "x")

    @rule("CS-2")
    async def test_CS_2_idempotent_under_key(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        other = (await store.create_session()).id
        first = await ctx(store).store_output(sid, LOG, key="call-1")
        repeat = await ctx(store).store_output(sid, "something else", key="call-1")
        assert repeat == first.model_copy(update={"replayed": True})
        racing = await asyncio.gather(
            *(ctx(store).store_output(sid, "raced", key="call-2") for _ in range(5))
        )
        assert len({r.output_id for r in racing}) == 1
        assert sum(not r.replayed for r in racing) == 1
        elsewhere = await ctx(store).store_output(other, "x", key="call-1")
        assert elsewhere.output_id != first.output_id and not elsewhere.replayed
        assert (await ctx(store).read_output(sid, first.output_id)).total_chars == len(LOG)

    @rule("CS-3")
    async def test_CS_3_read_by_line_range_capped(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        ref = await ctx(store).store_output(sid, LOG)
        part = await ctx(store).read_output(sid, ref.output_id, start_line=10, end_line=12)
        assert [(ln.number, ln.text) for ln in part.lines] == [
            (n, f"step {n}: compiled unit_{n} ok") for n in (10, 11, 12)
        ]
        assert not part.truncated and part.total_lines == 3000
        whole = await ctx(store).read_output(sid, ref.output_id)
        assert whole.truncated and "cut at 16,000 characters" in whole.note
        assert 15_900 < sum(len(ln.text) + 1 for ln in whole.lines) <= 16_000
        assert whole.next_line == whole.lines[-1].number + 1
        small = await ctx(store).read_output(sid, ref.output_id, max_chars=100)
        assert small.truncated and sum(len(ln.text) + 1 for ln in small.lines) <= 100
        for bad in ({"start_line": 0}, {"start_line": 3001}, {"max_chars": 0}):
            with pytest.raises(ValidationError):
                await ctx(store).read_output(sid, ref.output_id, **bad)

    @rule("CS-4")
    async def test_CS_4_grep_with_context_capped(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        text = LOG.replace("step 1500: compiled unit_1500 ok", "step 1500: ERROR in unit_1500")
        ref = await ctx(store).store_output(sid, text)
        found = await ctx(store).grep_output(sid, ref.output_id, r"ERROR", context_lines=1)
        assert [(ln.number, ln.match) for ln in found.lines] == [
            (1499, False),
            (1500, True),
            (1501, False),
        ]
        assert found.lines[1].text == "step 1500: ERROR in unit_1500"
        assert found.matches == 1 and not found.truncated
        # Two lines of context unless the caller says otherwise (the protocol's default).
        default = await ctx(store).grep_output(sid, ref.output_id, r"ERROR")
        assert [ln.number for ln in default.lines] == [1498, 1499, 1500, 1501, 1502]
        many = await ctx(store).grep_output(sid, ref.output_id, r"(?i)UNIT_\d+ OK$")
        assert many.matches == 2999 and many.truncated and "cut at 16,000" in many.note
        none = await ctx(store).grep_output(sid, ref.output_id, "no such thing")
        assert none.matches == 0 and none.lines == () and "no line" in none.note

    @rule("CS-5")
    async def test_CS_5_patterns_are_linear_or_refused(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        ref = await ctx(store).store_output(sid, "a" * 100_000 + "!\n" + LOG)
        for bad in (r"(a)\1", r"(?=a)", "(", ""):
            with pytest.raises(InvalidPatternError) as caught:
                await ctx(store).grep_output(sid, ref.output_id, bad)
            assert caught.value.code == "context_invalid_pattern"
        began = time.perf_counter()
        hostile = await ctx(store).grep_output(sid, ref.output_id, r"^(a+)+$")
        assert hostile.matches == 0
        assert time.perf_counter() - began < 2.0

    @rule("CS-6")
    async def test_CS_6_unknown_output(
        self, store: SessionStateStore, store_factory: StoreFactory
    ) -> None:
        sid = (await store.create_session()).id
        other = (await store.create_session()).id
        ref = await ctx(store).store_output(other, LOG)
        for call in (
            ctx(store).get_output(sid, ref.output_id),
            ctx(store).read_output(sid, ref.output_id),
            ctx(store).grep_output(sid, "out-nope", "x"),
        ):
            with pytest.raises(OutputNotFoundError) as caught:
                await call
            assert caught.value.code == "context_output_not_found"
            assert caught.value.session_id == sid
        # A missing session is reported before anything wrong with the other arguments.
        for missing in (
            ctx(store).read_output("missing", ref.output_id),
            ctx(store).read_output("missing", "", max_chars=0),
            ctx(store).store_output("missing", b"not text"),  # type: ignore[arg-type]
            ctx(store).search_history("missing", grep="(", limit=0),
            ctx(store).record_compaction("missing", {"boundary": -1}),  # type: ignore[arg-type]
        ):
            with pytest.raises(SessionNotFoundError):
                await missing
        # A closed store says so first, whatever the arguments.
        async with store_factory() as closed:
            pass
        for refused in (
            ctx(closed).get_window(sid),
            ctx(closed).store_output("", b"x"),  # type: ignore[arg-type]
            ctx(closed).search_history(sid, grep="("),
            ctx(closed).read_output(sid, ref.output_id, max_chars=0),
        ):
            with pytest.raises(StoreUnavailableError):
                await refused

    @rule("CS-7")
    async def test_CS_7_deleted_cleared_not_cloned(self, store: SessionStateStore) -> None:
        sid = await grown(store, 6)
        ref = await ctx(store).store_output(sid, LOG, key="k")
        await ctx(store).record_compaction(sid, Compaction(boundary=3, summary="s"))
        clone = (await store.clone_session(sid)).id
        with pytest.raises(OutputNotFoundError):
            await ctx(store).read_output(clone, ref.output_id)
        window = await ctx(store).get_window(clone)
        assert (window.start, window.compactions, len(window.messages)) == (0, 0, 6)
        await store.clear_session(sid)
        with pytest.raises(OutputNotFoundError):
            await ctx(store).get_output(sid, ref.output_id)
        assert (await ctx(store).get_window(sid)).compactions == 0
        assert not (await ctx(store).store_output(sid, "new", key="k")).replayed
        assert await store.delete_session(sid)
        await store.create_session(sid)
        with pytest.raises(OutputNotFoundError):
            await ctx(store).get_output(sid, ref.output_id)
        assert not (await ctx(store).store_output(sid, "new", key="k")).replayed

    @rule("CS-8")
    async def test_CS_8_compaction_is_one_atomic_step(self, store: SessionStateStore) -> None:
        sid = await grown(store, 10)
        empty = await ctx(store).get_window(sid)
        assert (empty.start, empty.summary, len(empty.messages)) == (0, None, 10)
        done = await ctx(store).record_compaction(
            sid, Compaction(boundary=6, summary="rows 0-5 said hello", expect_window_start=0)
        )
        assert (done.window_start, done.compactions, done.preserved) == (6, 1, True)
        window = await ctx(store).get_window(sid)
        assert window.start == 6 and window.compactions == 1
        assert window.summary is not None and window.summary.content == "rows 0-5 said hello"
        assert [m.content for m in window.messages] == [f"row {i}" for i in range(6, 10)]
        assert await store.get_message_count(sid) == 10  # the log keeps every row
        snap = await snapshot(store, sid)
        for boundary in (6, 5, 11):
            with pytest.raises(ValidationError):
                await ctx(store).record_compaction(sid, Compaction(boundary=boundary, summary="x"))
        with pytest.raises(ConcurrencyConflictError):
            await ctx(store).record_compaction(
                sid, Compaction(boundary=8, summary="x", expect_window_start=0)
            )
        assert await ctx(store).get_window(sid) == window
        assert await snapshot(store, sid) == snap
        with pytest.raises(SessionNotFoundError):
            await ctx(store).record_compaction("missing", Compaction(boundary=1, summary="x"))

    @rule("CS-9", requires="retention")
    async def test_CS_9_preserved_rows_are_archived(self, store_factory: StoreFactory) -> None:
        async with store_factory(max_messages=4) as store:
            kept, lost = await grown(store, 3), await grown(store, 3)
            await ctx(store).record_compaction(kept, Compaction(boundary=2, summary="s"))
            await ctx(store).record_compaction(
                lost, Compaction(boundary=2, summary="s", strategy="static")
            )
            # Compaction never deletes: under static too, the log keeps what left the window.
            still = await ctx(store).search_history(lost, grep=r"^row 1$")
            assert [(h.index, h.archived) for h in still.hits] == [(1, False)]
            assert not (await ctx(store).get_window(lost)).preserved
            for sid in (kept, lost):
                await store.append_messages(sid, commit(*(user(f"later {i}") for i in range(5))))
                assert await store.is_truncated(sid)
            found = await ctx(store).search_history(kept, grep=r"^row 1$")
            assert [(h.index, h.archived) for h in found.hits] == [(1, True)]
            # One call searches both: the live log first, then the archive, newest first.
            both = await ctx(store).search_history(kept, grep=r"^(row 1|later [03])$")
            assert [(h.index, h.line, h.archived) for h in both.hits] == [
                (6, "later 3", False),
                (3, "later 0", True),
                (1, "row 1", True),
            ]
            assert (await ctx(store).search_history(lost, grep=r"^row 1$")).hits == ()
            window = await ctx(store).get_window(kept)
            assert [m.content for m in window.messages] == [f"later {i}" for i in range(1, 5)]

    @rule("CS-10")
    async def test_CS_10_search_history(self, store: SessionStateStore) -> None:
        sid = (await store.create_session()).id
        await store.append_messages(
            sid,
            commit(
                user("deploy please"),
                tool_call("c1", "shell", '{"cmd": "kubectl apply"}'),
                tool_result("c1", "shell", "created\nport: 8443\ndone"),
                assistant("Deployed on port 8443."),
                tool_call("c2", "search", '{"q": "port"}'),
                tool_result("c2", "search", "no results"),
            ),
        )
        await ctx(store).record_compaction(sid, Compaction(boundary=4, summary="deployed"))
        found = await ctx(store).search_history(sid, grep=r"port: \d+")
        assert [(h.index, h.line_number, h.line, h.tool_name) for h in found.hits] == [
            (2, 2, "port: 8443", "shell")
        ]
        port = await ctx(store).search_history(sid, grep="8443")
        assert [h.index for h in port.hits] == [3, 2]
        tools = await ctx(store).search_history(sid, tool_name="search")
        assert [(h.index, h.role) for h in tools.hits] == [(5, "tool"), (4, "assistant")]
        both = await ctx(store).search_history(sid, grep="kubectl", tool_name="shell")
        assert [(h.index, h.line) for h in both.hits] == [(1, 'shell({"cmd": "kubectl apply"})')]
        capped = await ctx(store).search_history(sid, grep="o", limit=2)
        assert len(capped.hits) == 2 and capped.truncated
        assert [h.index for h in capped.hits] == [5, 4]
        # At most 20 hits unless the caller says otherwise (the protocol's default).
        many = await grown(store, 21)
        newest = await ctx(store).search_history(many, grep="row")
        assert [h.index for h in newest.hits] == list(range(20, 0, -1)) and newest.truncated
        for limit in (0, 201):
            with pytest.raises(ValidationError):
                await ctx(store).search_history(sid, grep="x", limit=limit)
        with pytest.raises(ValidationError):
            await ctx(store).search_history(sid)
        with pytest.raises(InvalidPatternError):
            await ctx(store).search_history(sid, grep="(")
        with pytest.raises(SessionNotFoundError):
            await ctx(store).search_history("missing", grep="x")

    @rule("CS-11")
    async def test_CS_11_a_cut_below_the_window_forgets_it(self, store: SessionStateStore) -> None:
        sid = await grown(store, 10)
        await ctx(store).record_compaction(sid, Compaction(boundary=4, summary="first"))
        await ctx(store).record_compaction(sid, Compaction(boundary=8, summary="second"))
        await store.truncate_messages(sid, 8)  # a cut at a boundary keeps that compaction
        window = await ctx(store).get_window(sid)
        assert (window.start, window.compactions) == (8, 2)
        await store.truncate_messages(sid, 6)
        window = await ctx(store).get_window(sid)
        assert (window.start, window.compactions) == (4, 1)
        assert window.summary is not None and window.summary.content == "first"
        await store.append_messages(sid, commit(user("again"), start_run=start("r1", 2)))
        window = await ctx(store).get_window(sid)
        assert (window.start, window.summary, window.compactions) == (0, None, 0)
        assert [m.content for m in window.messages] == ["row 0", "row 1", "again"]

    @rule("CS-12", requires="shared_instances")
    async def test_CS_12_one_compaction_wins(self, store_factory: StoreFactory) -> None:
        async with store_factory() as a, store_factory() as b:
            sid = await grown(a, 10)
            outcomes = await asyncio.gather(
                *(
                    s.record_compaction(  # type: ignore[attr-defined]
                        sid, Compaction(boundary=5, summary=f"s{i}", expect_window_start=0)
                    )
                    for i, s in enumerate((a, b) * 3)
                ),
                return_exceptions=True,
            )
            landed = [o for o in outcomes if not isinstance(o, BaseException)]
            assert len(landed) == 1
            assert all(isinstance(o, ConcurrencyConflictError) for o in outcomes if o not in landed)
            assert (await ctx(b).get_window(sid)).compactions == 1

    @rule("CS-19")
    async def test_CS_19_replace_archives_what_it_cuts(self, store_factory: StoreFactory) -> None:
        async with store_factory() as store:
            await replaced_rows_are_archived(store)
        # Retention archiving an index a replacement archived (skipped without retention).
        if self.capabilities.retention:
            async with store_factory(max_messages=4) as store:
                await retention_archives_an_index_again(store)
