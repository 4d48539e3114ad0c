"""The differential test's operations: what it generates and how one runs on a store.

Pools are small so that sequences collide: reused run, approval and checkpoint
ids, stale fences, delivered keys, repeated output keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, cast

from hypothesis import strategies as st

from helix_agents.core import (
    ChatMessage,
    Message,
    MessageCommit,
    PendingApproval,
    ScopedStateDelta,
    SessionStateStore,
)
from helix_agents.core.context import Compaction, ContextStore
from helix_agents.core.models import PageOrder

from ._helpers import (
    T0,
    item,
    item_deliveries,
    late_deliveries,
    notice,
    user,
)
from ._helpers import checkpoint as make_checkpoint
from ._helpers import late as late_answer
from ._helpers import start as start_run

__all__ = ["CONTEXT_OPS", "RETENTION", "SESSION_OPS", "Example", "Op", "apply"]

Op = tuple[Any, ...]

RUNS = st.sampled_from(["r1", "r2", "r3"])
FENCE = st.one_of(st.none(), st.none(), RUNS)  # unfenced twice as often: most writes land
SMALL = st.integers(0, 5)
APPROVALS = st.sampled_from(["a1", "a2"])
CHECKPOINTS = st.sampled_from(["p1", "p2"])
RETENTION = 4  # both stores keep the newest 4 rows, so rewinds can fall below them

# Stored outputs: an op names the n-th output its example stored (each store its own id);
# an n past the end reads MISSING_OUTPUT, an id no store mints.
WHICH = st.integers(0, 2)
MISSING_OUTPUT = "out-none"
CONTENTS = ("alpha\nbeta 1\ngamma\nbeta 2\n", "one line", "")
PATTERNS = st.sampled_from(["beta", "^g", "1$", "("])  # "(" is not a valid pattern


def _deliveries(keys: list[str]) -> st.SearchStrategy[list[tuple[str, int]]]:
    return st.lists(st.tuples(st.sampled_from(keys), st.integers(0, 2)), max_size=2)


COMMIT_IDS = st.none() | st.sampled_from(["x1", "x2"])
SCOPED = st.none() | st.sampled_from(["session", "user"])  # a scoped-state delta
APPEND: st.SearchStrategy[Op] = st.tuples(
    st.just("append"),
    st.integers(0, 3),  # rows
    st.none() | st.tuples(RUNS, st.none() | SMALL),  # start_run, rewind_to
    FENCE,
    st.none() | SMALL,  # expect_message_count
    _deliveries(["k1", "k2"]),
    _deliveries(["c1", "c2"]),
    COMMIT_IDS,
    SCOPED,
)
# Most random commits are refused; this one mostly lands, so that sessions fill up.
PLAIN_APPEND: st.SearchStrategy[Op] = st.tuples(
    st.just("append"),
    st.integers(1, 3),
    st.none() | st.tuples(RUNS, st.none()),
    st.none(),
    st.none(),
    st.just([]),
    st.just([]),
    COMMIT_IDS,
    SCOPED,
)

# Lists of strategies, drawn uniformly: an operation listed twice is drawn twice as often.
SESSION_OPS: list[st.SearchStrategy[Op]] = [
    APPEND,
    PLAIN_APPEND,
    PLAIN_APPEND,
    PLAIN_APPEND,
    st.tuples(st.just("record_item"), st.sampled_from(["k1", "k2"]), FENCE),
    st.tuples(st.just("record_late"), st.sampled_from(["c1", "c2"]), FENCE),
    st.tuples(st.just("truncate"), SMALL, FENCE),
    st.tuples(st.just("pop"), st.integers(1, 3), FENCE),
    st.tuples(st.just("replace"), SMALL, st.integers(0, 2), SMALL, FENCE),
    st.tuples(st.just("finish"), RUNS, st.sampled_from(["completed", "cancelled"])),
    *[st.tuples(st.just("approvals"), st.lists(APPROVALS, min_size=1, max_size=2), FENCE)] * 2,
    *[st.tuples(st.just("resolve"), APPROVALS)] * 2,
    *[st.tuples(st.just("checkpoint"), CHECKPOINTS, st.integers(0, 4), FENCE)] * 2,
    st.tuples(st.just("ckpt_delete"), st.lists(CHECKPOINTS, max_size=2)),
    st.tuples(
        st.just("ckpt_page"), st.sampled_from(["", "p", "p2"]), st.none() | CHECKPOINTS, SMALL
    ),
    st.tuples(st.just("page"), st.integers(0, 3), st.sampled_from(["asc", "desc"])),
    st.tuples(st.just("clone"), st.none() | st.integers(0, 6)),
    st.tuples(st.just("clear")),
    st.tuples(st.just("scoped"), st.sampled_from(["session", "user"])),
]

CONTEXT_OPS: list[st.SearchStrategy[Op]] = [
    st.tuples(
        st.just("out_store"),
        st.integers(0, len(CONTENTS) - 1),
        st.none() | st.just("t1"),  # tool_name
        st.none() | st.sampled_from(["o1", "o2"]),  # key
    ),
    st.tuples(st.just("out_get"), WHICH),
    st.tuples(
        st.just("out_read"), WHICH, st.integers(0, 3), st.none() | st.integers(0, 4), st.just(12)
    ),
    st.tuples(st.just("out_grep"), WHICH, PATTERNS, st.integers(0, 1), st.sampled_from([12, 999])),
    st.tuples(
        st.just("compact"),
        st.integers(0, 7),  # boundary
        st.sampled_from(["static", "hybrid"]),
        st.none() | SMALL,  # expect_window_start
    ),
    st.tuples(st.just("window")),
    st.tuples(
        st.just("search"), st.none() | PATTERNS, st.none() | st.just("t1"), st.integers(0, 3)
    ),
]


@dataclass
class Example:
    """One store's side of one generated sequence: its session and the outputs it stored."""

    store: SessionStateStore
    sid: str
    outputs: list[str] = field(default_factory=list)

    def output(self, which: int) -> str:
        """The id of the ``which``-th output stored, or one no store minted."""
        return self.outputs[which] if which < len(self.outputs) else MISSING_OUTPUT

    @property
    def context(self) -> ContextStore:
        """The store as a context store (the runner only generates context ops for one)."""
        return cast(ContextStore, self.store)


def _rows(n: int, seed: int) -> tuple[Message, ...]:
    """User, context and tool rows in turn (a tool row names tool ``t1``)."""
    kinds: tuple[Message, ...] = ()
    for i in range(n):
        text = f"{seed}.{i} beta {i}"
        if i % 3 == 0:
            kinds += (user(text),)
        elif i % 3 == 1:
            kinds += (notice(text),)
        else:
            kinds += (ChatMessage.model_validate({"role": "tool", "content": text, "name": "t1"}),)
    return kinds


def _commit(ex: Example, op: Op, seed: int) -> MessageCommit:
    _, n, start, fence, expect, items, late, cid, scope = op
    deltas: tuple[ScopedStateDelta, ...] = ()
    if scope is not None:
        owner = None if scope == "session" else f"{ex.sid}-u"
        deltas = (ScopedStateDelta(scope=scope, owner=owner, changes={f"k{seed % 2}": seed}),)
    return MessageCommit(
        messages=_rows(n, seed),
        start_run=None if start is None else start_run(*start),
        fence_run_id=fence,
        expect_message_count=expect,
        deliver_context_items=item_deliveries(items),
        deliver_late_answers=late_deliveries(late),
        commit_id=cid,
        scoped_state=deltas,
    )


async def snapshot(store: SessionStateStore, sid: str) -> dict[str, object]:
    """Everything a session holds, read back through the protocol."""
    info = await store.get_session(sid)
    assert info is not None
    state: dict[str, object] = {
        "info": info.model_dump(),
        "rows": [m.model_dump() for m in await store.get_messages(sid)],
        "ui": await store.get_ui_message_count(sid),
        "truncated": await store.is_truncated(sid),
        "items": [r.model_dump() for r in await store.list_undelivered_context_items(sid)],
        "late": [a.model_dump() for a in await store.list_undelivered_late_answers(sid)],
        "approvals": [a.model_dump() for a in await store.list_pending_approvals(sid)],
        "checkpoints": [c.model_dump() for c in await store.list_checkpoints(sid)],
        "latest": await store.latest_checkpoint(sid),
        "scoped": await store.get_scoped_state("session", sid),
    }
    if isinstance(store, ContextStore):
        state["window"] = await store.get_window(sid)
    return state


async def apply(ex: Example, op: Op, seed: int) -> object:
    """Run ``op`` on ``ex``'s store; its result (``None`` for the methods without one)."""
    store, sid, kind = ex.store, ex.sid, op[0]
    if kind == "append":
        return await store.append_messages(sid, _commit(ex, op, seed))
    if kind == "record_item":
        record = item(op[1], content=op[1], kind="notice")
        return await store.record_context_item(sid, record, fence_run_id=op[2])
    if kind == "record_late":
        answer = late_answer(op[1], output="late", tool="t")
        return await store.record_late_answer(sid, answer, fence_run_id=op[2])
    if kind == "truncate":
        await store.truncate_messages(sid, op[1], fence_run_id=op[2])
        return None
    if kind == "pop":
        return await store.pop_messages(sid, op[1], fence_run_id=op[2])
    if kind == "replace":
        _, keep, n, expect, fence = op
        return await store.replace_messages(
            sid, keep, _rows(n, seed), expect_message_count=expect, fence_run_id=fence
        )
    if kind == "finish":
        status: Literal["completed", "cancelled"] = op[2]
        await store.finish_run(sid, op[1], status)
        return None
    if kind in ("approvals", "resolve", "checkpoint", "ckpt_delete", "ckpt_page"):
        return await _records(store, sid, op, seed)
    if kind == "page":
        return await _pages(store, sid, op[1], op[2])
    if kind == "clone":
        return await _clone(store, sid, op[1], seed)
    if kind == "clear":
        await store.clear_session(sid)
        return None
    if kind == "scoped":
        return await store.get_scoped_state(op[1], sid if op[1] == "session" else f"{sid}-u")
    return await _context(ex, op)


async def _records(store: SessionStateStore, sid: str, op: Op, seed: int) -> object:
    kind = op[0]
    if kind == "approvals":
        approvals = [
            PendingApproval(
                approval_id=a, tool_name="t", tool_call_id=f"call-{a}", input=seed, requested_at=T0
            )
            for a in op[1]
        ]
        await store.add_pending_approvals(sid, approvals, fence_run_id=op[2])
        return None
    if kind == "resolve":  # twice: exactly one caller resolves it
        return [await store.resolve_approval(sid, op[1]) for _ in range(2)]
    if kind == "checkpoint":
        checkpoint = make_checkpoint(op[1], op[2], state={"s": seed})
        return await store.save_checkpoint(sid, checkpoint, fence_run_id=op[3])
    if kind == "ckpt_delete":
        return await store.delete_checkpoints(sid, op[1])
    _, prefix, before, limit = op
    return await store.page_checkpoints(sid, prefix=prefix, before=before, limit=limit)


async def _pages(store: SessionStateStore, sid: str, limit: int, order: PageOrder) -> object:
    """A page, then the page its cursor leads to (cursors are core's, so alike)."""
    first = await store.page_messages(sid, limit=limit, order=order)
    if first.next_cursor is None:
        return [first]
    return [
        first,
        await store.page_messages(sid, limit=limit, cursor=first.next_cursor, order=order),
    ]


async def _clone(store: SessionStateStore, sid: str, up_to: int | None, seed: int) -> object:
    """The clone's info and everything it holds; the clone is deleted again."""
    target = f"{sid}-k{seed}"
    info = await store.clone_session(sid, target, up_to=up_to)
    try:
        return info, await snapshot(store, target)
    finally:
        await store.delete_session(target)


async def _context(ex: Example, op: Op) -> object:
    ctx, sid, kind = ex.context, ex.sid, op[0]
    if kind == "out_store":
        _, content, tool, key = op
        ref = await ctx.store_output(sid, CONTENTS[content], tool_name=tool, key=key)
        if ref.output_id not in ex.outputs:
            ex.outputs.append(ref.output_id)
        return ref
    if kind == "out_get":
        return await ctx.get_output(sid, ex.output(op[1]))
    if kind == "out_read":
        _, which, start, end, max_chars = op
        return await ctx.read_output(
            sid, ex.output(which), start_line=start, end_line=end, max_chars=max_chars
        )
    if kind == "out_grep":
        _, which, pattern, lines, max_chars = op
        return await ctx.grep_output(
            sid, ex.output(which), pattern, context_lines=lines, max_chars=max_chars
        )
    if kind == "compact":
        _, boundary, strategy, expect = op
        compaction = Compaction(
            boundary=boundary,
            summary=f"summary to {boundary}",
            strategy=strategy,
            expect_window_start=expect,
        )
        return await ctx.record_compaction(sid, compaction)
    if kind == "window":
        return await ctx.get_window(sid)
    _, grep, tool, limit = op
    return await ctx.search_history(sid, grep=grep, tool_name=tool, limit=limit)
