"""USG-1..USG-6: token and cost usage recorded with commits (docs/lifecycle.md, "Usage")."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import pytest

from helix_agents.core import (
    MessageCountConflictError,
    RunSupersededError,
    SessionNotFoundError,
    SessionStateStore,
    ValidationError,
)
from helix_agents.core.base import _usage
from helix_agents.core.models import Usage, UsageTotals
from helix_agents.core.transfer import export_lines, import_lines

from ._base import StoreFactory, rule
from ._helpers import commit, snapshot, start, user

# The documented bounds (docs/lifecycle.md), as numbers: a store's own constants could drift.
MAX_USAGE_COUNT = 10**12
MAX_USAGE_MODELS = 64

_GPT = Usage(model="gpt-4o", input_tokens=100, output_tokens=20, cached_tokens=40)
_PRICED = Usage(
    model="claude", requests=2, input_tokens=7, output_tokens=3, cost=Decimal("0.000000000001")
)


def _totals(*models: Usage) -> UsageTotals:
    return UsageTotals.of(models)


async def _refused(store: SessionStateStore, sid: str, error: type[Exception], call: Any) -> str:
    """``call()`` raises ``error`` naming ``sid`` and leaves the session, usage included,
    as it was; the message."""
    before = await snapshot(store, sid)
    with pytest.raises(error) as caught:
        await call()
    assert await snapshot(store, sid) == before
    assert getattr(caught.value, "session_id", None) == sid
    return str(caught.value)


class UsageRules:
    """Usage recorded with a commit's rows; a session's totals and a user's."""

    @rule("USG-1")
    async def test_USG_1_a_commits_usage_is_added_to_the_totals_with_its_rows(
        self, store: SessionStateStore
    ) -> None:
        await store.create_session("s")
        done = await store.append_messages("s", commit(user(), usage=(_GPT,)))
        assert done.message_count == 1
        assert await store.get_usage("s") == _totals(_GPT)
        # One model twice in a commit is summed; costs add up exactly, as decimals.
        half = Usage(model="gpt-4o", input_tokens=1, cost=Decimal("0.1"))
        await store.append_messages("s", commit(usage=(half, half, _PRICED)))
        gpt = Usage(
            model="gpt-4o",
            requests=3,
            input_tokens=102,
            output_tokens=20,
            cached_tokens=40,
            cost=Decimal("0.2"),
        )
        got = await store.get_usage("s")
        assert got == _totals(_PRICED, gpt)
        assert (got.requests, got.input_tokens, got.output_tokens, got.cached_tokens) == (
            5,
            109,
            23,
            40,
        )
        assert got.cost == Decimal("0.200000000001")
        assert await store.get_message_count("s") == 1
        # A refused commit records nothing: the fence, the expected count.
        await store.append_messages("s", commit(user(), start_run=start("r1")))
        await store.finish_run("s", "r1", "completed")
        await _refused(
            store,
            "s",
            RunSupersededError,
            lambda: store.append_messages("s", commit(user(), fence_run_id="r1", usage=(_GPT,))),
        )
        await _refused(
            store,
            "s",
            MessageCountConflictError,
            lambda: store.append_messages(
                "s", commit(user(), expect_message_count=0, usage=(_GPT,))
            ),
        )
        assert (await store.get_usage("s")).input_tokens == 109

    @rule("USG-1")
    async def test_USG_1_a_replayed_commit_counts_once(self, store: SessionStateStore) -> None:
        await store.create_session("s")
        first = await store.append_messages("s", commit(user(), commit_id="c1", usage=(_GPT,)))
        await store.append_messages("s", commit(user()))
        again = await store.append_messages(
            "s", commit(user(), commit_id="c1", expect_message_count=0, usage=(_GPT,))
        )
        assert again.replayed and again.first_index == first.first_index
        assert await store.get_usage("s") == _totals(_GPT)

    @rule("USG-1", requires="shared_instances")
    async def test_USG_1_concurrent_commits_are_all_counted(
        self, store_factory: StoreFactory
    ) -> None:
        async with store_factory() as a, store_factory() as b:
            await a.create_session("s")
            one = Usage(model="m", input_tokens=3, output_tokens=1, cost=Decimal("0.01"))
            other = Usage(model="n", output_tokens=2)
            sends = [
                s.append_messages("s", commit(user(str(i)), usage=(one, other)))
                for i, s in enumerate((a, b) * 6)
            ]
            # The same commit id sent twice at once lands (and counts) once.
            sends += [
                s.append_messages("s", commit(user(), commit_id="x", usage=(one,))) for s in (a, b)
            ]
            await asyncio.gather(*sends)
            got = await b.get_usage("s")
            assert await a.get_message_count("s") == 13
            assert got.models == (
                Usage(
                    model="m", requests=13, input_tokens=39, output_tokens=13, cost=Decimal("0.13")
                ),
                Usage(model="n", requests=12, output_tokens=24),
            )
            assert await a.get_usage("s") == got

    @rule("USG-2")
    async def test_USG_2_get_usage_reads_totals_per_model_and_overall(
        self, store: SessionStateStore
    ) -> None:
        await store.create_session("s", metadata={"k": 1})
        empty = await store.get_usage("s")
        assert empty == UsageTotals() and empty.cost is None and empty.models == ()
        await store.append_messages("s", commit(user(), usage=(_GPT, _PRICED)))
        got = await store.get_usage("s")
        assert [u.model for u in got.models] == ["claude", "gpt-4o"]
        assert got.cost == _PRICED.cost  # the sum of the costs given; gpt-4o gave none
        assert (await store.get_usage("s")).models[1].cost is None
        info = await store.get_session("s")
        assert info is not None and info.metadata == {"k": 1} and info.metadata_version == 0
        with pytest.raises(SessionNotFoundError):
            await store.get_usage("nope")
        with pytest.raises(ValidationError):
            await store.get_usage("")

    @rule("USG-3")
    async def test_USG_3_clear_and_edits_keep_usage_clone_and_fork_start_without(
        self, store: SessionStateStore
    ) -> None:
        await store.create_session("s", user_id="u1")
        await store.append_messages("s", commit(user(), user(), user(), usage=(_GPT,)))
        await store.truncate_messages("s", 2)
        await store.pop_messages("s")
        await store.replace_messages("s", 0, [user()], expect_message_count=1)
        await store.update_session_metadata("s", {"a": 1})
        await store.set_session_title("s", "t")
        assert await store.get_usage("s") == _totals(_GPT)
        clone = await store.clone_session("s", "c")
        assert clone.title == "t" and await store.get_usage("c") == UsageTotals()
        branch = await store.fork_session("s", "f", at=1)
        assert branch.title == "t" and await store.get_usage("f") == UsageTotals()
        assert await store.get_usage("s") == _totals(_GPT)  # the parent keeps its own
        await store.clear_session("s")
        assert await store.get_usage("s") == _totals(_GPT)
        await store.delete_session("s")
        await store.create_session("s", user_id="u1")
        assert await store.get_usage("s") == UsageTotals()

    @rule("USG-3", requires="engine")
    async def test_USG_3_an_export_carries_usage(self, store: SessionStateStore) -> None:
        await store.create_session("s")
        await store.append_messages("s", commit(user(), usage=(_GPT, _PRICED)))
        lines = [line async for line in export_lines(store, ["s"], whole_store=False)]
        await store.delete_session("s")
        await import_lines(store, lambda: iter(lines), "f")
        assert await store.get_usage("s") == _totals(_GPT, _PRICED)

    @rule("USG-4")
    async def test_USG_4_bad_usage_is_refused_naming_the_session_and_value(
        self, store: SessionStateStore
    ) -> None:
        await store.create_session("s")
        await store.append_messages("s", commit(user(), usage=(_GPT,)))
        most = Usage(
            model="m" * 512,
            requests=MAX_USAGE_COUNT,
            input_tokens=MAX_USAGE_COUNT,
            output_tokens=MAX_USAGE_COUNT,
            cached_tokens=MAX_USAGE_COUNT,
            cost=Decimal("1000000000.000000000000"),
        )
        bad: list[tuple[dict[str, Any], str]] = [
            ({"input_tokens": -1}, "-1"),
            ({"output_tokens": MAX_USAGE_COUNT + 1}, str(MAX_USAGE_COUNT + 1)),
            ({"requests": -2}, "-2"),
            ({"input_tokens": 1, "cached_tokens": 2}, "cached_tokens 2"),
            ({"cost": Decimal("-0.01")}, "-0.01"),
            ({"cost": Decimal("1000000000.1")}, "1000000000.1"),
            ({"cost": Decimal("0.0000000000001")}, "1E-13"),
            ({"model": ""}, "usage[0].model"),
            ({"model": "  "}, "'  '"),
            ({"model": "m" * 513}, "usage[0].model"),
            ({"model": "a\x00b"}, "usage[0].model"),
        ]
        for change, shown in bad:
            entry = most.model_copy(update=change)
            message = await _refused(
                store,
                "s",
                ValidationError,
                lambda e=entry: store.append_messages("s", commit(user(), usage=(e,))),
            )
            assert "'s'" in message and shown in message, message
        # Values of the wrong type, given as JSON: refused the same way.
        for value in (
            {"model": "m", "input_tokens": 1.5},
            {"model": 7},
            {"model": "m", "cost": "x"},
        ):
            raw = {"messages": [], "usage": [value]}
            await _refused(store, "s", ValidationError, lambda r=raw: store.append_messages("s", r))
        # Values that skipped the model's validation (model_construct) are refused too.
        for fields in (
            {"model": "m", "input_tokens": 1.5},
            {"model": "m", "output_tokens": True},
            {"model": 7},
            {"model": "m", "cost": 0.5},
            {"model": "m", "cost": Decimal("NaN")},
        ):
            built = Usage.model_construct(**{**most.model_dump(), **fields})
            await _refused(
                store,
                "s",
                ValidationError,
                lambda b=built: store.append_messages("s", commit(user(), usage=(b,))),
            )
        # At most MAX_USAGE_MODELS entries in a commit, and models in a session.
        many = tuple(Usage(model=f"m{i}") for i in range(MAX_USAGE_MODELS + 1))
        await _refused(
            store, "s", ValidationError, lambda: store.append_messages("s", commit(usage=many))
        )
        await store.create_session("t")  # exactly the most entries in one commit land
        await store.append_messages("t", commit(usage=many[:MAX_USAGE_MODELS]))
        assert len((await store.get_usage("t")).models) == MAX_USAGE_MODELS
        await store.append_messages("s", commit(usage=many[: MAX_USAGE_MODELS - 1]))
        assert len((await store.get_usage("s")).models) == MAX_USAGE_MODELS
        message = await _refused(
            store,
            "s",
            ValidationError,
            lambda: store.append_messages("s", commit(user(), usage=(Usage(model="new"),))),
        )
        assert str(MAX_USAGE_MODELS + 1) in message
        # The largest values land; a bad usage on a missing session: the session first.
        await store.append_messages("s", commit(usage=(most.model_copy(update={"model": "m0"}),)))
        assert (await store.get_usage("s")).cost == Decimal("1000000000.000000000000")
        with pytest.raises(SessionNotFoundError):
            await store.append_messages(
                "nope", commit(usage=(_GPT.model_copy(update={"input_tokens": -1}),))
            )

    @rule("USG-5")
    async def test_USG_5_a_users_usage_sums_their_sessions(
        self, store: SessionStateStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        empty = await store.get_user_usage("u1")
        assert (empty.usage, empty.sessions, empty.next_cursor) == (UsageTotals(), 0, None)
        for n in range(7):
            await store.create_session(f"s{n}", user_id="u1")
            one = Usage(model=f"m{n % 2}", input_tokens=n, cost=Decimal(n))
            await store.append_messages(f"s{n}", commit(user(), usage=(one,)))
        await store.create_session("other", user_id="u2")
        await store.append_messages("other", commit(usage=(_GPT,)))
        await store.create_session("nobody")
        await store.append_messages("nobody", commit(usage=(_GPT,)))
        whole = await store.get_user_usage("u1")
        assert (whole.user_id, whole.sessions, whole.next_cursor) == ("u1", 7, None)
        assert whole.usage.models == (
            Usage(model="m0", requests=4, input_tokens=12, cost=Decimal(12)),
            Usage(model="m1", requests=3, input_tokens=9, cost=Decimal(9)),
        )
        # A bounded number of sessions per call; the pages add up to the whole.
        assert _usage.USAGE_SCAN_BUDGET == 1_000  # the documented bound of one call
        monkeypatch.setattr(_usage, "USAGE_SCAN_BUDGET", 3)
        monkeypatch.setattr(_usage, "FILTERED_BATCH", 2)  # a budget that ends mid-batch
        pages = [await store.get_user_usage("u1")]
        while pages[-1].next_cursor is not None:
            pages.append(await store.get_user_usage("u1", cursor=pages[-1].next_cursor))
        assert [p.sessions for p in pages] == [3, 3, 1]
        assert sum((p.usage for p in pages), UsageTotals()) == whole.usage
        cursor = pages[0].next_cursor
        monkeypatch.undo()
        with pytest.raises(ValidationError):
            await store.get_user_usage("u2", cursor=cursor)
        for bad in ("", None, 7):
            with pytest.raises(ValidationError, match="user_id"):
                await store.get_user_usage(bad)  # type: ignore[arg-type]
        # A deleted session no longer counts.
        await store.delete_session("s6")
        after = await store.get_user_usage("u1")
        assert after.sessions == 6 and after.usage.input_tokens == 15
        assert (await store.get_user_usage("u2")).usage == _totals(_GPT)
