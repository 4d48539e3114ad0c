"""BR-1..BR-6: branches of a session (docs/lifecycle.md, "Branches")."""

from __future__ import annotations

import anyio
import pytest

from helix_agents.core import (
    Message,
    ScopedStateDelta,
    SessionExistsError,
    SessionNotFoundError,
    SessionStateStore,
    ValidationError,
)
from helix_agents.core.models import Branch

from ._base import rule
from ._helpers import approval, checkpoint, commit, item, late, notice, snapshot, start, user
from .rules_context import ctx


async def _source(store: SessionStateStore) -> list[Message]:
    """Session ``src`` (user ``u1``): six rows, checkpoints at 2, 4 and 6, a title and
    metadata, a redacted row, and everything a fork does not carry."""
    await store.create_session("src", user_id="u1", metadata={"m": 1})
    await store.set_session_title("src", "the trip")
    own = ScopedStateDelta(scope="session", changes={"k": 1})
    rows: list[Message] = [user("0"), notice("1"), user("2"), user("3"), user("4"), user("5")]
    await store.append_messages(
        "src", commit(*rows, start_run=start("r1"), commit_id="c-1", scoped_state=(own,))
    )
    for n in (2, 4, 6):
        await store.save_checkpoint("src", checkpoint(f"cp{n}", n))
    await store.redact_message("src", 0, reason="pii")
    await store.redact_message("src", 3, reason="pii")
    await store.record_context_item("src", item("k1"))
    await store.record_late_answer("src", late("call-1"))
    await store.add_pending_approvals("src", [approval("a1")])
    await ctx(store).store_output("src", "big output", tool_name="t")
    await store.replace_messages("src", 6, [user("6")], expect_message_count=6, archive=True)
    return await store.get_messages("src")


class BranchRules:
    """BR-1 … BR-6."""

    @rule("BR-1")
    async def test_BR_1_a_branch_copies_the_prefix_and_names_its_parent(
        self, store: SessionStateStore
    ) -> None:
        rows = await _source(store)
        branch = await store.fork_session("src", "b1", at=3)
        assert branch.branch_of is not None
        point = branch.branch_of
        assert (point.session_id, point.parent_id, point.at, point.checkpoint_id) == (
            "b1",
            "src",
            3,
            None,
        )
        assert await store.get_session("b1") == branch
        assert (branch.user_id, branch.metadata, branch.title) == ("u1", {"m": 1}, "the trip")
        source = await store.get_session("src")
        assert source is not None and source.branch_of is None
        assert branch.metadata_version == source.metadata_version
        assert branch.message_count == 3 and await store.get_messages("b1") == rows[:3]
        assert [c.checkpoint_id for c in await store.list_checkpoints("b1")] == ["cp2"]
        assert [r.index for r in await store.list_redactions("b1")] == [0]
        whole = await store.fork_session("src", "b2")
        assert whole.message_count == 7 and await store.get_messages("b2") == rows
        clone = await store.clone_session("src", "c1", up_to=3)
        assert clone.branch_of is None
        assert [b.session_id for b in await store.list_branches("src")] == ["b1", "b2"]

    @rule("BR-2")
    async def test_BR_2_forking_at_a_checkpoint(self, store: SessionStateStore) -> None:
        rows = await _source(store)
        branch = await store.fork_session("src", "b1", checkpoint_id="cp4")
        assert branch.branch_of is not None
        assert (branch.branch_of.at, branch.branch_of.checkpoint_id) == (4, "cp4")
        assert await store.get_messages("b1") == rows[:4]
        assert [c.checkpoint_id for c in await store.list_checkpoints("b1")] == ["cp2", "cp4"]
        before = await snapshot(store, "src")
        for kwargs in ({"checkpoint_id": "nope"}, {"checkpoint_id": "cp2", "at": 2}):
            with pytest.raises(ValidationError) as caught:
                await store.fork_session("src", "b2", **kwargs)
            assert caught.value.session_id == "src"
        assert await store.get_session("b2") is None
        assert await snapshot(store, "src") == before

    @rule("BR-3")
    async def test_BR_3_a_branch_carries_nothing_of_the_source_runs(
        self, store: SessionStateStore
    ) -> None:
        await _source(store)
        await store.fork_session("src", "b1")
        sub = await store.fork_session("b1", "b1a", at=2)
        assert sub.branch_of is not None and sub.branch_of.parent_id == "b1"
        info = await store.get_session("b1")
        assert info is not None and info.current_run is None
        assert await store.list_undelivered_context_items("b1") == []
        assert await store.list_undelivered_late_answers("b1") == []
        assert await store.list_pending_approvals("b1") == []
        assert await store.get_scoped_state("session", "b1") == {}
        assert await store.list_branches("b1") == [sub.branch_of]
        assert [b.session_id for b in await store.list_branches("src")] == ["b1"]
        # the run and the commit id are the source's: the branch may use both anew
        done = await store.append_messages("b1", commit(user("b"), commit_id="c-1"))
        assert done.message_count == 8
        await store.append_messages("src", commit(user("s")))
        assert (await store.get_messages("b1"))[-1] == user("b")
        assert (await store.get_messages("src"))[-1] == user("s")

    @rule("BR-4")
    async def test_BR_4_listing_branches(self, store: SessionStateStore) -> None:
        await store.create_session("src", user_id="u1", metadata={"m": 1})
        await store.append_messages("src", commit(user("0"), user("1")))
        before = await store.get_session("src")
        assert before is not None
        one = await store.fork_session("src", "b1", at=1)
        two = await store.fork_session("src", "b2")
        three = await store.fork_session("src", "b3", at=0)
        after = await store.get_session("src")
        assert after is not None
        assert (after.last_activity_at, after.metadata_version) == (
            before.last_activity_at,
            before.metadata_version,
        )
        assert await store.list_branches("src") == [
            b.branch_of for b in (one, two, three) if b.branch_of is not None
        ]
        assert await store.delete_session("b2")
        await store.create_session("b2", user_id="u1")  # same id, no branch
        assert [b.session_id for b in await store.list_branches("src")] == ["b1", "b3"]
        assert await store.list_branches("b1") == []
        with pytest.raises(SessionNotFoundError):
            await store.list_branches("missing")

    @rule("BR-5")
    async def test_BR_5_bad_forks_write_nothing(self, store: SessionStateStore) -> None:
        await _source(store)
        await store.create_session("taken")
        before = await snapshot(store, "src")
        branches = await store.list_branches("src")
        with pytest.raises(SessionNotFoundError):
            await store.fork_session("missing", "x")
        with pytest.raises(SessionExistsError):
            await store.fork_session("src", "taken")
        for kwargs in ({"at": -1}, {"at": 8}, {"at": "2"}, {"at": True}):
            with pytest.raises(ValidationError):
                await store.fork_session("src", "x", **kwargs)
        for target in ("", "x" * 10_000, 7):
            with pytest.raises(ValidationError):
                await store.fork_session("src", target)  # type: ignore[arg-type]
        assert await store.get_session("x") is None
        assert await snapshot(store, "src") == before
        assert await store.list_branches("src") == branches

    @rule("BR-6")
    async def test_BR_6_forks_racing_appends(self, store: SessionStateStore) -> None:
        await store.create_session("src")
        await store.append_messages("src", commit(user("0")))
        forks: list[Branch] = []

        async def append() -> None:
            for n in range(1, 11):
                await store.append_messages("src", commit(user(str(n))))

        async def fork(tag: str) -> None:
            for n in range(5):
                made = await store.fork_session("src", f"{tag}{n}")
                assert made.branch_of is not None
                forks.append(made.branch_of)

        async with anyio.create_task_group() as tg:
            tg.start_soon(append)
            tg.start_soon(fork, "x")
            tg.start_soon(fork, "y")
        final = await store.get_messages("src")
        for point in forks:
            got = await store.get_messages(point.session_id)
            assert got == final[: point.at] and len(got) >= 1
        listed = await store.list_branches("src")
        assert sorted(b.session_id for b in listed) == sorted(b.session_id for b in forks)
        assert len(listed) == 10
