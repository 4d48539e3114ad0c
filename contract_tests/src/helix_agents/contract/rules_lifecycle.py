"""META-1..META-6 and RED-1..RED-6: session metadata, titles and redaction
(docs/lifecycle.md)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from helix_agents.core import (
    ChatMessage,
    ContextMessage,
    SessionNotFoundError,
    SessionStateStore,
    ValidationError,
)
from helix_agents.core.context import Compaction
from helix_agents.core.errors import MetadataVersionConflictError
from helix_agents.core.listing import FILTERED_BATCH, USER_SCAN_BUDGET
from helix_agents.core.messages import dump_message
from helix_agents.core.transfer import export_lines, import_lines

from ._base import StoreFactory, rule
from ._helpers import FrozenClock, assistant, commit, notice, snapshot, user
from .rules_context import ctx

_SECRET = "card 4111-1111-1111-1111 expires 09/29"


def _tool_call() -> ChatMessage:
    return ChatMessage(
        role="assistant",
        content=f"calling with {_SECRET}",
        id="call-row",
        tool_calls=[{"id": "c1", "type": "function", "function": {"arguments": _SECRET}}],
    )


def _tool_answer() -> ChatMessage:
    return ChatMessage(role="tool", content=_SECRET, tool_call_id="c1", name="lookup")


async def _chat(store: SessionStateStore, sid: str = "s", **options: Any) -> None:
    """A session of five rows: user, assistant tool call, tool answer, context, user."""
    await store.create_session(sid, user_id="u1", **options)
    rows = (user("hi " + _SECRET), _tool_call(), _tool_answer(), notice(_SECRET), user("bye"))
    await store.append_messages(sid, commit(*rows))


async def _refused(
    store: SessionStateStore, sid: str, error: type[Exception], call: Any
) -> Exception:
    """``call()`` raises ``error`` naming ``sid`` and leaves the session as it was."""
    before = await snapshot(store, sid)
    redactions = await store.list_redactions(sid) if before.get("exists", True) else None
    with pytest.raises(error) as caught:
        await call()
    assert await snapshot(store, sid) == before
    if redactions is not None:
        assert await store.list_redactions(sid) == redactions
    assert getattr(caught.value, "session_id", sid) == sid
    return caught.value


async def _titles(store: SessionStateStore, **filters: Any) -> list[str]:
    return [s.id for s in (await store.list_all_sessions(first=500, **filters)).sessions]


async def _user_titles(store: SessionStateStore, **filters: Any) -> list[str]:
    return [s.id for s in (await store.list_sessions("u1", first=500, **filters)).sessions]


class LifecycleRules:
    """Metadata updates, titles, their listing filters; redaction and its audit."""

    @rule("META-1")
    async def test_META_1_the_reserved_key_is_never_shown_nor_written_by_callers(
        self, store: SessionStateStore
    ) -> None:
        with pytest.raises(ValidationError, match="_helix"):
            await store.create_session("r", metadata={"_helix": {"t": "x"}})
        assert await store.get_session("r") is None
        await store.create_session("s", metadata={"k": 1})
        await store.set_session_title("s", "A title")
        info = await store.get_session("s")
        assert info is not None and info.metadata == {"k": 1} and info.title == "A title"
        (listed,) = (await store.list_all_sessions()).sessions
        assert listed.metadata == {"k": 1} and listed.title == "A title"
        await _refused(
            store, "s", ValidationError, lambda: store.update_session_metadata("s", {"_helix": 1})
        )
        with pytest.raises(ValidationError, match="_helix"):
            await store.list_all_sessions(metadata={"_helix": {}})

    @rule("META-2")
    async def test_META_2_an_update_merges_a_json_merge_patch(
        self, store: SessionStateStore
    ) -> None:
        meta: dict[str, Any] = {"a": 1, "b": {"x": 1, "y": 2}, "c": [1, 2], "d": "keep"}
        await store.create_session("s", metadata=meta)
        patch: dict[str, Any] = {"a": None, "b": {"y": None, "z": 3}, "c": [3], "e": {"n": None}}
        info = await store.update_session_metadata("s", patch)
        expected = {"b": {"x": 1, "z": 3}, "c": [3], "d": "keep", "e": {}}
        assert info.metadata == expected and info.metadata_version == 1
        assert await store.get_session("s") == info
        assert patch["b"] == {"y": None, "z": 3}  # the caller's patch is not changed
        again = await store.update_session_metadata("s", {})
        assert again.metadata == expected and again.metadata_version == 2
        assert again.last_activity_at > info.last_activity_at
        # Bad patches: nothing changes, the error names the session.
        for bad in ([1], "x", None, {"k": float("nan")}, {"k": {1, 2}}, {"k": "x" * 70_000}):
            await _refused(
                store, "s", ValidationError, lambda b=bad: store.update_session_metadata("s", b)
            )
        # 64 KiB of compact JSON in UTF-8 ("é" is 2 bytes) is the most; a byte more is refused.
        await store.create_session("b")
        exact = "é" * 1000 + "x" * (65_536 - len('{"a":1,"k":""}') - 2000)
        done = await store.update_session_metadata("b", {"a": 1, "k": exact})
        assert done.metadata == {"a": 1, "k": exact}
        await _refused(
            store,
            "b",
            ValidationError,
            lambda: store.update_session_metadata("b", {"k": exact + "x"}),
        )
        big = {f"k{n}": "x" * 1000 for n in range(60)}
        await store.update_session_metadata("s", big)
        err = await _refused(
            store,
            "s",
            ValidationError,
            lambda: store.update_session_metadata("s", {"more": "y" * 10_000}),
        )
        assert "65536" in str(err)
        # The order of checks: a bad id, then a missing session, then the argument.
        with pytest.raises(ValidationError):
            await store.update_session_metadata("", [])  # type: ignore[arg-type]
        with pytest.raises(SessionNotFoundError):
            await store.update_session_metadata("nope", [])  # type: ignore[arg-type]

    @rule("META-3")
    async def test_META_3_an_expected_version_that_differs_refuses_the_update(
        self, store: SessionStateStore
    ) -> None:
        await store.create_session("s", metadata={"a": 1})
        info = await store.update_session_metadata("s", {"a": 2}, expect_version=0)
        assert info.metadata_version == 1
        err = await _refused(
            store,
            "s",
            MetadataVersionConflictError,
            lambda: store.update_session_metadata("s", {"a": 3}, expect_version=0),
        )
        assert isinstance(err, MetadataVersionConflictError)
        assert (err.expected, err.actual, err.retryable) == (0, 1, True)
        assert "'s'" in str(err) and "0" in str(err) and "1" in str(err)
        await _refused(
            store,
            "s",
            MetadataVersionConflictError,
            lambda: store.set_session_title("s", "t", expect_version=5),
        )
        for bad in (-1, True, "1", 1.0):
            await _refused(
                store,
                "s",
                ValidationError,
                lambda b=bad: store.update_session_metadata("s", {}, expect_version=b),
            )
        done = await store.set_session_title("s", "t", expect_version=1)
        assert (done.title, done.metadata_version, done.metadata) == ("t", 2, {"a": 2})

    @rule("META-4")
    async def test_META_4_a_title_is_set_validated_and_cleared(
        self, store: SessionStateStore
    ) -> None:
        await store.create_session("s", metadata={"a": 1})
        assert (await store.get_session("s")).title is None  # type: ignore[union-attr]
        info = await store.set_session_title("s", "Trip to Lisbon ✈")
        assert (info.title, info.metadata, info.metadata_version) == (
            "Trip to Lisbon ✈",
            {"a": 1},
            1,
        )
        assert await store.get_session("s") == info
        longest = "t" * 200
        assert (await store.set_session_title("s", longest)).title == longest
        for bad in ("", "   ", "t" * 201, 7, b"x", "bad \ud800"):
            await _refused(
                store, "s", ValidationError, lambda b=bad: store.set_session_title("s", b)
            )
        cleared = await store.set_session_title("s", None)
        assert (cleared.title, cleared.metadata_version) == (None, 3)
        assert await store.get_session("s") == cleared
        with pytest.raises(SessionNotFoundError):
            await store.set_session_title("nope", "x")

    @rule("META-5")
    async def test_META_5_metadata_and_title_go_with_clear_clone_and_export(
        self, store: SessionStateStore
    ) -> None:
        await _chat(store, metadata={"a": [1]})
        await store.set_session_title("s", "Kept")
        await store.update_session_metadata("s", {"b": True})
        await store.clear_session("s")
        info = await store.get_session("s")
        assert info is not None
        assert (info.metadata, info.title, info.metadata_version) == (
            {"a": [1], "b": True},
            "Kept",
            2,
        )
        clone = await store.clone_session("s", "c")
        assert (clone.metadata, clone.title, clone.metadata_version) == (info.metadata, "Kept", 2)
        read = await store.get_session("c")
        assert read is not None and (read.metadata, read.title) == (info.metadata, "Kept")

    @rule("META-5", requires="engine")
    async def test_META_5_an_export_carries_metadata_title_and_version(
        self, store: SessionStateStore
    ) -> None:
        await _chat(store, metadata={"a": [1]})
        await store.set_session_title("s", "Kept")
        info = await store.update_session_metadata("s", {"b": True})
        lines = [line async for line in export_lines(store, ["s"], whole_store=False)]
        await store.delete_session("s")
        await import_lines(store, lambda: iter(lines), "f")
        back = await store.get_session("s")
        assert back is not None
        assert (back.metadata, back.title, back.metadata_version) == (info.metadata, "Kept", 2)

    @rule("META-6")
    async def test_META_6_listings_filter_by_title_and_metadata(
        self, store: SessionStateStore
    ) -> None:
        await store.create_session("a", user_id="u1", metadata={"team": "red", "n": 1})
        await store.create_session("b", user_id="u1", metadata={"team": "blue", "n": 1})
        await store.create_session("c", user_id="u2", metadata={"team": "red"})
        await store.create_session("d", user_id="u1")
        await store.set_session_title("a", "Refund for order 7")
        await store.set_session_title("b", "refund question")
        await store.set_session_title("c", "Another REFUND")
        assert await _titles(store, title="refund") == ["a", "b", "c"]
        assert await _titles(store, title="REFUND", metadata={"team": "red"}) == ["a", "c"]
        assert await _titles(store, title="order 7") == ["a"]
        assert await _titles(store, title="refund", user_id="u1") == ["a", "b"]
        assert await _titles(store, metadata={"n": 1}) == ["a", "b"]
        assert await _titles(store, metadata={"n": 1.0}) == []
        assert sorted(await _user_titles(store, title="refund")) == ["a", "b"]
        assert await _user_titles(store, metadata={"team": "red"}) == ["a"]
        assert await _user_titles(store, title="nothing") == []
        assert sorted(await _user_titles(store)) == ["a", "b", "d"]
        # A page holding the last matches has no cursor.
        whole = await store.list_sessions("u1", first=2, title="refund")
        assert sorted(s.id for s in whole.sessions) == ["a", "b"] and whole.next_cursor is None
        # Pages of one: the cursors walk the matches only, once each.
        seen, cursor = [], None
        while True:
            page = await store.list_sessions("u1", first=1, cursor=cursor, title="refund")
            seen += [s.id for s in page.sessions]
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert sorted(seen) == ["a", "b"]
        # A cursor of the store-wide listing is bound to its filters.
        first = await store.list_all_sessions(first=1, title="refund")
        assert first.next_cursor is not None
        with pytest.raises(ValidationError):
            await store.list_all_sessions(first=1, cursor=first.next_cursor, title="order")
        bad_titles: list[Any] = ["", " ", "x" * 201, 3]
        for bad in bad_titles:
            with pytest.raises(ValidationError):
                await store.list_all_sessions(title=bad)
            with pytest.raises(ValidationError):
                await store.list_sessions("u1", title=bad)
        with pytest.raises(ValidationError):
            await store.list_sessions("u1", metadata=[("team", "red")])  # type: ignore[arg-type]

    @rule("META-6")
    async def test_META_6_a_filtered_user_listing_reads_on_past_one_batch(
        self, store: SessionStateStore
    ) -> None:
        # Fewer matches than a page holds: the call reads on through every batch.
        for n in range(FILTERED_BATCH + 5):
            await store.create_session(f"s{n:03d}", user_id="u1")
        await store.set_session_title("s000", "the needle")
        await store.set_session_title("s001", "another needle")
        page = await store.list_sessions("u1", first=5, title="needle")
        assert sorted(s.id for s in page.sessions) == ["s000", "s001"]
        assert page.next_cursor is None

    @rule("META-6", requires="clock")
    async def test_META_6_a_filtered_user_listing_reads_at_most_its_budget_per_call(
        self, store_factory: StoreFactory
    ) -> None:
        # One activity time for all: the listing reads them by id, so the budget's last
        # session and the one after it are known.
        clock = FrozenClock()
        async with store_factory(clock=clock) as store:
            for n in range(USER_SCAN_BUDGET + 1):
                pick = n >= USER_SCAN_BUDGET - 1
                await store.create_session(f"s{n:03d}", user_id="u1", metadata={"m": pick})
            first = await store.list_sessions("u1", first=5, metadata={"m": True})
            assert [s.id for s in first.sessions] == [f"s{USER_SCAN_BUDGET - 1:03d}"]
            assert first.next_cursor is not None
            rest = await store.list_sessions(
                "u1", first=5, metadata={"m": True}, cursor=first.next_cursor
            )
            assert [s.id for s in rest.sessions] == [f"s{USER_SCAN_BUDGET:03d}"]
            assert rest.next_cursor is None

    @rule("META-6", requires="handles")
    async def test_META_6_the_handles_listing_filters_as_list_sessions(
        self, store: SessionStateStore
    ) -> None:
        await store.create_session("a", user_id="u1", metadata={"team": "red"})
        await store.create_session("b", user_id="u1")
        await store.set_session_title("b", "A question")
        sessions = store.sessions  # type: ignore[attr-defined]
        assert [s.id for s in (await sessions("u1", title="QUESTION")).sessions] == ["b"]
        assert [s.id for s in (await sessions("u1", metadata={"team": "red"})).sessions] == ["a"]
        with pytest.raises(ValidationError):
            await sessions("u1", title="")

    @rule("RED-1")
    async def test_RED_1_a_redacted_row_reads_back_as_a_tombstone_in_place(
        self, store: SessionStateStore
    ) -> None:
        await _chat(store)
        before = await store.get_messages("s")
        counts = (await store.get_message_count("s"), await store.get_ui_message_count("s"))
        record = await store.redact_message("s", 1, reason="card number")
        assert (record.index, record.row_id, record.role, record.replaced) == (
            1,
            "call-row",
            "assistant",
            False,
        )
        await store.redact_message("s", 2, reason="card number", replacement="(removed)")
        await store.redact_message("s", 3, reason="card number")
        rows = await store.get_messages("s")
        assert len(rows) == 5
        assert (await store.get_message_count("s"), await store.get_ui_message_count("s")) == counts
        assert dump_message(rows[1]) == {
            "role": "assistant",
            "content": "[redacted]",
            "id": "call-row",
            "redacted": True,
        }
        assert dump_message(rows[2]) == {
            "role": "tool",
            "content": "(removed)",
            "tool_call_id": "c1",
            "redacted": True,
        }
        assert dump_message(rows[3]) == {
            "role": "context",
            "kind": "notice",
            "content": "[redacted]",
            "metadata": {"redacted": True},
        }
        assert [rows[0], rows[4]] == [before[0], before[4]]
        page = await store.page_messages("s", limit=5)
        assert list(page.messages) == rows
        assert _SECRET not in json.dumps([dump_message(r) for r in rows[1:4]])
        memory = ContextMessage(kind="memory", content=_SECRET, memory_ids=["m1"], source="x")
        await store.append_messages("s", commit(memory))
        await store.redact_message("s", 5, reason="card number", replacement="")
        assert dump_message((await store.get_messages("s"))[5]) == {
            "role": "context",
            "kind": "memory",
            "content": "",
            "memory_ids": [],
            "metadata": {"redacted": True},
        }

    @rule("RED-2")
    async def test_RED_2_a_row_is_named_by_its_index_or_its_id(
        self, store: SessionStateStore
    ) -> None:
        await _chat(store)
        await store.append_messages(
            "s", commit(ChatMessage(role="user", content="x", id="call-row"))
        )
        record = await store.redact_message("s", "call-row", reason="r", actor="ops@example")
        assert (record.index, record.actor) == (1, "ops@example")
        rows = await store.get_messages("s")
        assert rows[1].content == "[redacted]" and rows[5].content == "x"
        await _refused(
            store, "s", ValidationError, lambda: store.redact_message("s", "no-such-id", reason="r")
        )
        await store.create_session("t")
        first = ChatMessage(role="user", content=_SECRET, id="first")
        await store.append_messages("t", commit(first, user("x")))
        assert (await store.redact_message("t", "first", reason="r")).index == 0
        assert (await store.get_messages("t"))[0].content == "[redacted]"

    @rule("RED-3")
    async def test_RED_3_redacting_a_redacted_row_again_changes_nothing(
        self, store: SessionStateStore
    ) -> None:
        await _chat(store)
        first = await store.redact_message("s", 0, reason="first")
        before = await snapshot(store, "s")
        again = await store.redact_message("s", 0, reason="second", replacement="other")
        assert again == first
        assert await snapshot(store, "s") == before
        assert await store.list_redactions("s") == [first]
        context = await store.redact_message("s", 3, reason="context row")
        assert await store.redact_message("s", 3, reason="again") == context
        assert await store.list_redactions("s") == [first, context]
        # A row cut and appended again at the same index is a new row: it can be redacted.
        await store.truncate_messages("s", 0)
        await store.append_messages("s", commit(user("new " + _SECRET)))
        fresh = await store.redact_message("s", 0, reason="third")
        assert fresh.reason == "third" and len(await store.list_redactions("s")) == 3

    @rule("RED-4")
    async def test_RED_4_bad_redactions_are_refused_and_change_nothing(
        self, store: SessionStateStore
    ) -> None:
        await _chat(store)
        bad: list[dict[str, Any]] = [
            {"row": 5, "reason": "r"},
            {"row": -1, "reason": "r"},
            {"row": True, "reason": "r"},
            {"row": 2.0, "reason": "r"},
            {"row": "", "reason": "r"},
            {"row": 2, "reason": ""},
            {"row": 2, "reason": "r" * 1001},
            {"row": 2, "reason": 3},
            {"row": 2, "reason": "r", "replacement": "x" * 10_001},
            {"row": 2, "reason": "r", "replacement": 1},
            {"row": 2, "reason": "r", "actor": ""},
        ]
        for call in bad:
            await _refused(
                store,
                "s",
                ValidationError,
                lambda c=call: store.redact_message("s", c.pop("row"), **c),
            )
        err = await _refused(
            store, "s", ValidationError, lambda: store.redact_message("s", 9, reason="r")
        )
        assert "9" in str(err)
        with pytest.raises(ValidationError):
            await store.redact_message("", 0, reason="r")
        with pytest.raises(SessionNotFoundError):
            await store.redact_message("nope", 0, reason="")
        with pytest.raises(SessionNotFoundError):
            await store.list_redactions("nope")
        longest = await store.redact_message("s", 2, reason="r" * 1000, replacement="x" * 10_000)
        assert longest.replaced and (await store.get_messages("s"))[2].content == "x" * 10_000

    @rule("RED-5")
    async def test_RED_5_every_redaction_is_audited_with_the_session(
        self, store: SessionStateStore
    ) -> None:
        await _chat(store)
        assert await store.list_redactions("s") == []
        start = datetime.now(UTC)
        one = await store.redact_message("s", 2, reason="pii", actor="alice")
        two = await store.redact_message("s", 0, reason="gdpr request", replacement="[gone]")
        audit = await store.list_redactions("s")
        assert audit == [one, two]
        assert (two.index, two.row_id, two.role, two.actor, two.reason, two.replaced) == (
            0,
            None,
            "user",
            None,
            "gdpr request",
            True,
        )
        assert all(start <= r.at <= datetime.now(UTC) for r in audit)
        # The audit is no part of the metadata nor of its version.
        info = await store.get_session("s")
        assert info is not None and (info.metadata, info.metadata_version) == ({}, 0)
        # A clone keeps the records of the rows it copies.
        await store.clone_session("s", "c", up_to=1)
        assert await store.list_redactions("c") == [two]

    @rule("RED-5", requires="engine")
    async def test_RED_5_an_export_carries_the_tombstones_and_the_audit(
        self, store: SessionStateStore
    ) -> None:
        await _chat(store)
        await store.redact_message("s", 2, reason="pii", actor="alice")
        await store.redact_message("s", 0, reason="gdpr request", replacement="[gone]")
        audit = await store.list_redactions("s")
        rows = await store.get_messages("s")
        lines = [line async for line in export_lines(store, ["s"], whole_store=False)]
        records = [json.loads(line) for line in lines]
        redacted = [r for r in records if r.get("type") == "row" and r["index"] in (0, 2)]
        assert len(redacted) == 2 and _SECRET not in json.dumps(redacted)
        await store.delete_session("s")
        await import_lines(store, lambda: iter(lines), "f")
        assert await store.list_redactions("s") == audit
        assert await store.get_messages("s") == rows

    @rule("RED-6", requires="retention")
    async def test_RED_6_history_search_never_finds_redacted_text(
        self, store_factory: StoreFactory
    ) -> None:
        async with store_factory(max_messages=4) as store:
            await store.create_session("s")
            await store.append_messages("s", commit(user("start")))
            # From a compaction on, history is preserved: retention archives.
            await ctx(store).record_compaction("s", Compaction(boundary=1, summary="none yet"))
            await store.append_messages("s", commit(user("a " + _SECRET), assistant("ok")))
            found = await ctx(store).search_history("s", grep="4111")
            assert [h.index for h in found.hits] == [1]
            await store.redact_message("s", 1, reason="pii")
            assert (await ctx(store).search_history("s", grep="4111")).hits == ()
            # Retention archives the tombstone, never the text.
            await store.append_messages("s", commit(user("c"), user("d"), user("e")))
            assert await store.is_truncated("s")
            archived = await ctx(store).search_history("s", grep="redacted")
            assert [(h.index, h.archived) for h in archived.hits] == [(1, True)]
            assert (await ctx(store).search_history("s", grep="4111")).hits == ()
            # An archived row is no longer retained: it cannot be redacted (RED-4).
            await _refused(
                store, "s", ValidationError, lambda: store.redact_message("s", 1, reason="r")
            )
            window = await ctx(store).get_window("s")
            assert all(_SECRET not in json.dumps(dump_message(m)) for m in window.messages)
