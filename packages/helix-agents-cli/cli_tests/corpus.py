"""A store's worth of sessions using every record a store keeps (docs/export.md, EXP-13),
ADK, LangGraph and OpenAI Agents sessions among them: what the round trip moves between
backends and then reads back and continues."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from helix_agents.contract.rules_context import ctx
from helix_agents.core import (
    ChatMessage,
    Checkpoint,
    ContextItem,
    ContextItemDelivery,
    LateAnswer,
    LateAnswerDelivery,
    MessageCommit,
    PendingApproval,
    ScopedStateDelta,
    StartRun,
    StoredContextItem,
    open_store,
)
from helix_agents.core.context import Compaction

from .corpus_adk import adk_session
from .corpus_graphs import graph_turn
from .seed import T0, seed

LONG_OUTPUT = "\n".join(f"line {i}: {'x' * (i % 7)}" for i in range(1, 301))
"""The tool output the ``ctx`` session offloads."""


def _options(url: str, **more: Any) -> dict[str, Any]:
    return {"auto_migrate": True, **more} if url.startswith("postgres") else more


def _user(i: int) -> ChatMessage:
    return ChatMessage(role="user", content=f"question {i}", id=f"u{i}")


def _answer(i: int) -> ChatMessage:
    return ChatMessage(role="assistant", content=f"answer {i} ✓")


async def build_corpus(url: str) -> dict[str, Any]:
    """Seed ``url`` (:func:`seed`, then session ``ctx``) and return what the round trip
    checks beyond the records: the offloaded output's id and the last commit's id."""
    await seed(url)
    # Retention keeps 6 rows: the first drop (before any compaction) loses rows; once a
    # hybrid compaction preserved the history, dropped rows go to the archive.
    async with open_store(url, **_options(url, max_messages=6)) as store:
        await store.create_session("ctx", user_id="alice", metadata={"agent": "long-run"})
        await store.record_context_item(
            "ctx",
            StoredContextItem(
                key="mem-a",
                item=ContextItem(kind="memory", content="prefers rail", memory_ids=["m9"]),
                at=T0,
            ),
        )
        await store.record_late_answer(
            "ctx", LateAnswer(call_id="late-1", tool_name="quote", output="42 EUR", at=T0)
        )
        await store.append_messages(
            "ctx",
            MessageCommit(
                start_run=StartRun(run_id="run-a"),
                commit_id="commit-1",
                messages=(
                    _user(1),
                    ContextItem(
                        kind="memory", content="prefers rail", memory_ids=["m9"]
                    ).to_message(),
                    _answer(1),
                    ChatMessage(role="tool", content="42 EUR", tool_call_id="late-1"),
                    _user(2),
                    _answer(2),
                    _user(3),
                    _answer(3),
                ),
                deliver_context_items=(ContextItemDelivery(key="mem-a", row_offset=1),),
                deliver_late_answers=(LateAnswerDelivery(call_id="late-1", row_offset=3),),
                scoped_state=(
                    ScopedStateDelta(scope="app", owner="app-travel", changes={"model": "m1"}),
                    ScopedStateDelta(scope="user", owner="alice", changes={"lang": "fr"}),
                    ScopedStateDelta(scope="session", changes={"step": 1, "cart": [1, 2]}),
                ),
            ),
        )
        ref = await ctx(store).store_output("ctx", LONG_OUTPUT, tool_name="search", key="out-1")
        await ctx(store).record_compaction("ctx", Compaction(boundary=6, summary="Asked 2 things."))
        await store.add_pending_approvals(
            "ctx",
            [
                PendingApproval(
                    approval_id=f"ap-{n}",
                    tool_name="book",
                    tool_call_id=f"call-{n}",
                    input={"n": n},
                    requested_at=T0 + timedelta(seconds=n),
                )
                for n in (1, 2)
            ],
        )
        await store.resolve_approval("ctx", "ap-1")
        await store.finish_run("ctx", "run-a", "completed")
        await store.save_checkpoint(
            "ctx",
            Checkpoint(
                checkpoint_id="ck-ctx",
                run_id="run-a",
                message_count=8,
                state={"graph": "node-3"},
                created_at=T0,
            ),
        )
        await store.record_context_item(
            "ctx",
            StoredContextItem(
                key="tip-1", item=ContextItem(kind="instruction", content="be brief"), at=T0
            ),
        )
        last = await store.append_messages(
            "ctx",
            MessageCommit(
                start_run=StartRun(run_id="run-b"),
                commit_id="commit-2",
                messages=(_user(4), _answer(4), _user(5)),
                scoped_state=(ScopedStateDelta(scope="session", changes={"step": 2}),),
            ),
        )
        await ctx(store).record_compaction("ctx", Compaction(boundary=9, summary="Then 2 more."))
        # A title, a metadata update and a redaction travel with the session (META-5, RED-5).
        await store.set_session_title("ctx", "Rail trip")
        await store.update_session_metadata("ctx", {"stage": "booked"}, expect_version=1)
        await store.redact_message("ctx", 7, reason="pii", actor="ops", replacement="[fare]")
        # Archiving replacements (CS-19): index 1 is archived twice while the log keeps a
        # row 1; retention then archives row 0 after them.
        await store.create_session("replaced", user_id="bob")
        await store.append_messages("replaced", MessageCommit(messages=(_user(1), _user(2))))
        for n in (3, 4):
            await store.replace_messages(
                "replaced", 1, [_user(n)], expect_message_count=2, archive=True
            )
        await ctx(store).record_compaction("replaced", Compaction(boundary=1, summary="One."))
        await store.append_messages("replaced", MessageCommit(messages=(_user(5),) * 5))
    async with open_store(url, **_options(url)) as store:
        await adk_session(store)
        await graph_turn(store, "hi")
    return {"output_id": ref.output_id, "last_commit": last}
