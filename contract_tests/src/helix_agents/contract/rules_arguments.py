"""INP-4..INP-7: malformed arguments, a closed or unopened store and forged cursors, refused
with a type."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import pytest

from helix_agents.core import (
    SessionStateStore,
    StateStoreError,
    StoreUnavailableError,
    ValidationError,
)
from helix_agents.core.context import Compaction

from ._base import StoreFactory, rule
from ._helpers import approval, checkpoint, commit, item, late, snapshot, start, user
from ._hostile import forged_b64, forged_cursor
from .rules_context import ctx

Call = Callable[[SessionStateStore], Awaitable[object]]
BAD_IDS: list[Any] = [123, b"s0", ["s0"], {"s": 1}, 1.5, True, "", "\ud800", "a\x00b", "x" * 513]
BAD_INTS: list[Any] = [True, 1.5, "3", -1, 10**30, [1]]
BAD_VALUES: list[Any] = [5, "x", b"x", [5], object()]


BadCall = Callable[[SessionStateStore, str, str, Any], Awaitable[object]]
# Each public method, with the argument that takes the bad value last; ``s`` is the store,
# ``sid`` and ``uid`` a filled session and its user, ``b`` the bad value.
_BAD_CALLS: list[tuple[str, list[Any], BadCall]] = [
    ("create_session", BAD_IDS, lambda s, sid, uid, b: s.create_session(b)),
    ("create_session(user_id)", BAD_IDS, lambda s, sid, uid, b: s.create_session(user_id=b)),
    ("list_sessions", BAD_IDS, lambda s, sid, uid, b: s.list_sessions(b)),
    ("clone_session(target)", BAD_IDS, lambda s, sid, uid, b: s.clone_session(sid, b)),
    ("finish_run(run_id)", BAD_IDS, lambda s, sid, uid, b: s.finish_run(sid, b, "failed")),
    ("resolve_approval", BAD_IDS, lambda s, sid, uid, b: s.resolve_approval(sid, b)),
    ("get_checkpoint", BAD_IDS, lambda s, sid, uid, b: s.get_checkpoint(sid, b)),
    ("page_checkpoints(limit)", BAD_INTS, lambda s, sid, uid, b: s.page_checkpoints(sid, limit=b)),
    ("pop_messages(count)", BAD_INTS, lambda s, sid, uid, b: s.pop_messages(sid, b)),
    ("get_messages(limit)", BAD_INTS, lambda s, sid, uid, b: s.get_messages(sid, limit=b)),
    ("page_messages(limit)", BAD_INTS, lambda s, sid, uid, b: s.page_messages(sid, limit=b)),
    ("list_sessions(first)", BAD_INTS, lambda s, sid, uid, b: s.list_sessions(uid, first=b)),
    ("truncate_messages", BAD_INTS, lambda s, sid, uid, b: s.truncate_messages(sid, b)),
    ("clone_session(up_to)", BAD_INTS, lambda s, sid, uid, b: s.clone_session(sid, up_to=b)),
    ("append_messages", [*BAD_VALUES, None], lambda s, sid, uid, b: s.append_messages(sid, b)),
    (
        "record_context_item",
        [*BAD_VALUES, None],
        lambda s, sid, uid, b: s.record_context_item(sid, b),
    ),
    (
        "record_late_answer",
        [*BAD_VALUES, None],
        lambda s, sid, uid, b: s.record_late_answer(sid, b),
    ),
    ("save_checkpoint", [*BAD_VALUES, None], lambda s, sid, uid, b: s.save_checkpoint(sid, b)),
    (
        "add_pending_approvals",
        [*BAD_VALUES, None],
        lambda s, sid, uid, b: s.add_pending_approvals(sid, b),
    ),
    (
        "page_messages(order)",
        [*BAD_VALUES, None, "up"],
        lambda s, sid, uid, b: s.page_messages(sid, order=b),
    ),
    (
        "finish_run(status)",
        [*BAD_VALUES, None, "live"],
        lambda s, sid, uid, b: s.finish_run(sid, "r1", b),
    ),
    ("page_messages(cursor)", BAD_VALUES, lambda s, sid, uid, b: s.page_messages(sid, cursor=b)),
    ("list_sessions(cursor)", BAD_VALUES, lambda s, sid, uid, b: s.list_sessions(uid, cursor=b)),
    ("list_all_sessions(first)", BAD_INTS, lambda s, sid, uid, b: s.list_all_sessions(first=b)),
    (
        "list_all_sessions(cursor)",
        BAD_VALUES,
        lambda s, sid, uid, b: s.list_all_sessions(cursor=b),
    ),
    ("list_all_sessions(user_id)", BAD_IDS, lambda s, sid, uid, b: s.list_all_sessions(user_id=b)),
    (
        "list_all_sessions(active_since)",
        BAD_VALUES,
        lambda s, sid, uid, b: s.list_all_sessions(active_since=b),
    ),
    (
        "list_all_sessions(metadata)",
        [5, "x", [1, 2], {1: 2}, {"x": float("nan")}],
        lambda s, sid, uid, b: s.list_all_sessions(metadata=b),
    ),
    (
        "create_session(metadata)",
        [5, "x", [1, 2], {1: 2}, {"x": float("nan")}],
        lambda s, sid, uid, b: s.create_session(metadata=b),
    ),
]


def _calls_on(sid: str, uid: str) -> list[tuple[str, Call]]:
    """Every public method with one malformed argument each, on session ``sid`` of ``uid``."""
    calls: list[tuple[str, Call]] = []
    for bad in BAD_IDS:
        for name, by_session in _session_methods().items():
            calls.append((f"{name}(session_id={bad!r:.20})", _bound(by_session, bad)))
        for name, fenced in _fenced_methods(sid).items():
            calls.append((f"{name}(fence_run_id={bad!r:.20})", _bound(fenced, bad)))
    for name, values, call in _BAD_CALLS:
        calls += [(f"{name}({bad!r:.20})", _bound_call(call, sid, uid, bad)) for bad in values]
    return calls


def _context_calls(sid: str) -> list[tuple[str, Call]]:
    """Each context-store method and ``get_scoped_state``, well formed and malformed."""
    c = ctx
    bad: Any = b"x"
    return [
        ("store_output", lambda s: c(s).store_output(sid, "x")),
        ("store_output(content)", lambda s: c(s).store_output(sid, bad)),
        ("store_output(session_id)", lambda s: c(s).store_output("", "x")),
        ("get_output", lambda s: c(s).get_output(sid, "out-1")),
        ("get_output(output_id)", lambda s: c(s).get_output(sid, "")),
        ("read_output", lambda s: c(s).read_output(sid, "out-1")),
        ("read_output(max_chars)", lambda s: c(s).read_output(sid, "out-1", max_chars=0)),
        ("grep_output", lambda s: c(s).grep_output(sid, "out-1", "x")),
        ("grep_output(pattern)", lambda s: c(s).grep_output(sid, "out-1", "(")),
        (
            "record_compaction",
            lambda s: c(s).record_compaction(sid, Compaction(boundary=1, summary="s")),
        ),
        ("record_compaction(compaction)", lambda s: c(s).record_compaction(sid, bad)),
        ("get_window", lambda s: c(s).get_window(sid)),
        ("get_window(session_id)", lambda s: c(s).get_window(bad)),
        ("search_history", lambda s: c(s).search_history(sid)),
        ("search_history(limit)", lambda s: c(s).search_history(sid, grep="(", limit=0)),
        ("get_scoped_state(scope)", lambda s: s.get_scoped_state(bad, "u")),
        ("get_scoped_state(owner)", lambda s: s.get_scoped_state("user", "")),
    ]


async def _unrefused(
    call: Callable[[], Awaitable[object]], refusal: type[StateStoreError], answered: str
) -> str | None:
    """``None`` if ``call`` raised ``refusal``; else the other error it raised, or ``answered``."""
    try:
        await call()
    except refusal:
        return None
    except BaseException as exc:
        return f"{type(exc).__name__}: {exc!s:.80}"
    return answered


def _unopened_calls(sid: str, uid: str) -> list[tuple[str, Call]]:
    """Every public method, well formed and malformed, for a store that is not open.

    A commit with a malformed fence is refused when it is built, before any store sees it.
    """
    calls = [(f"{n}(valid)", _bound(f, sid)) for n, f in _session_methods().items()]
    calls += [
        ("create_session()", lambda s: s.create_session()),
        ("list_sessions(uid)", lambda s: s.list_sessions(uid)),
        ("list_all_sessions()", lambda s: s.list_all_sessions(user_id=uid)),
        ("get_scoped_state(uid)", lambda s: s.get_scoped_state("user", uid)),
        *_calls_on(sid, uid),
        *_context_calls(sid),
    ]
    return [(n, c) for n, c in calls if not n.startswith("append_messages(fence_run_id=")]


def _bound(call: Callable[[SessionStateStore, Any], Awaitable[object]], bad: Any) -> Call:
    return lambda store: call(store, bad)


def _bound_call(call: BadCall, sid: str, uid: str, bad: Any) -> Call:
    return lambda store: call(store, sid, uid, bad)


def _session_methods() -> dict[str, Callable[[SessionStateStore, Any], Awaitable[object]]]:
    return {
        "get_session": lambda s, i: s.get_session(i),
        "delete_session": lambda s, i: s.delete_session(i),
        "clear_session": lambda s, i: s.clear_session(i),
        "clone_session": lambda s, i: s.clone_session(i),
        "append_messages": lambda s, i: s.append_messages(i, commit(user())),
        "get_messages": lambda s, i: s.get_messages(i),
        "get_message_count": lambda s, i: s.get_message_count(i),
        "get_ui_message_count": lambda s, i: s.get_ui_message_count(i),
        "page_messages": lambda s, i: s.page_messages(i),
        "truncate_messages": lambda s, i: s.truncate_messages(i, 0),
        "is_truncated": lambda s, i: s.is_truncated(i),
        "finish_run": lambda s, i: s.finish_run(i, "r1", "failed"),
        "record_context_item": lambda s, i: s.record_context_item(i, item("k9")),
        "list_undelivered_context_items": lambda s, i: s.list_undelivered_context_items(i),
        "record_late_answer": lambda s, i: s.record_late_answer(i, late("c9")),
        "list_undelivered_late_answers": lambda s, i: s.list_undelivered_late_answers(i),
        "add_pending_approvals": lambda s, i: s.add_pending_approvals(i, [approval("a9")]),
        "list_pending_approvals": lambda s, i: s.list_pending_approvals(i),
        "resolve_approval": lambda s, i: s.resolve_approval(i, "a1"),
        "save_checkpoint": lambda s, i: s.save_checkpoint(i, checkpoint("p9", 0)),
        "get_checkpoint": lambda s, i: s.get_checkpoint(i, "p1"),
        "latest_checkpoint": lambda s, i: s.latest_checkpoint(i),
        "list_checkpoints": lambda s, i: s.list_checkpoints(i),
        "page_checkpoints": lambda s, i: s.page_checkpoints(i),
        "delete_checkpoints": lambda s, i: s.delete_checkpoints(i, ["p9"]),
        "pop_messages": lambda s, i: s.pop_messages(i),
        "replace_messages": lambda s, i: s.replace_messages(i, 0, [user()], expect_message_count=0),
    }


def _fenced_methods(sid: str) -> dict[str, Callable[[SessionStateStore, Any], Awaitable[object]]]:
    return {
        "append_messages": lambda s, f: s.append_messages(sid, commit(user(), fence_run_id=f)),
        "truncate_messages": lambda s, f: s.truncate_messages(sid, 1, fence_run_id=f),
        "record_context_item": lambda s, f: s.record_context_item(sid, item("k9"), fence_run_id=f),
        "record_late_answer": lambda s, f: s.record_late_answer(sid, late("c9"), fence_run_id=f),
        "add_pending_approvals": lambda s, f: s.add_pending_approvals(
            sid, [approval("a9")], fence_run_id=f
        ),
        "save_checkpoint": lambda s, f: s.save_checkpoint(sid, checkpoint("p9", 0), fence_run_id=f),
        "pop_messages": lambda s, f: s.pop_messages(sid, fence_run_id=f),
        "replace_messages": lambda s, f: s.replace_messages(
            sid, 2, [user()], expect_message_count=2, fence_run_id=f
        ),
    }


async def _filled(store: SessionStateStore, sid: str, uid: str) -> None:
    await store.create_session(sid, user_id=uid)
    await store.append_messages(sid, commit(user(), user(), start_run=start("r1")))
    await store.record_context_item(sid, item("k1"))
    await store.record_late_answer(sid, late("c1"))
    await store.add_pending_approvals(sid, [approval("a1")])
    await store.save_checkpoint(sid, checkpoint("p1", 1))


def _forged_cursors(sid: str, other_sid: str, uid: str) -> list[Any]:
    """Cursors no store handed out, of every shape; none may be honoured."""
    message = {"v": 1, "s": sid, "o": "asc", "i": 1}
    listing = {"v": 1, "u": uid, "t": "2026-01-01T00:00:00+00:00", "id": sid}
    shapes: list[Any] = [
        5,
        b"eyJ2IjoxfQ",
        ["x"],
        "",
        "!!!!",
        "a",
        "\ud800",
        "é" * 8,
        "A" * 20_000,
        forged_b64(b"\xff\xfe\x00"),
        forged_b64(b"not json"),
        forged_b64(b"[" * 1100 + b"]" * 1100),
        forged_b64(b'{"v":1,"s":' + b"[" * 5000 + b"]" * 5000 + b"}"),
        forged_b64(json.dumps({"v": 1, "s": "\ud800", "o": "asc", "i": 1}).encode()),
        forged_b64(json.dumps({"v": 1, "u": uid, "t": "2026", "id": "\udfff"}).encode()),
    ]
    payloads: list[object] = [[], 5, "s", None, {"v": 2}, {"v": 1}, {**message, "v": True}]
    for payload in payloads:
        shapes.append(forged_cursor(payload))
    message_fields: dict[str, list[object]] = {
        "s": [other_sid, None, 5],
        "o": ["up", None],
        "i": [-1, "3", 1.5, True, None, 10**30, 2**63],
    }
    for field, values in message_fields.items():
        shapes += [forged_cursor({**message, field: v}) for v in values]
    listing_fields: dict[str, list[object]] = {
        "u": ["someone-else", None, 5],
        "t": ["x", "2026-01-01T00:00:00", "0001-01-01T00:00:00+14:00", 5, None],
        "id": [5, None, "", "x" * 513, "a\x00b"],
    }
    for field, values in listing_fields.items():
        shapes += [forged_cursor({**listing, field: v}) for v in values]
    return shapes


class ArgumentRules:
    """INP-4..INP-6: bad arguments, a closed store, forged cursors."""

    @rule("INP-4")
    async def test_INP_4_malformed_arguments_are_validation_errors(
        self, store: SessionStateStore
    ) -> None:
        sid, uid = "inp4-s", "inp4-u"
        await _filled(store, sid, uid)
        before = await snapshot(store, sid)
        listing = await store.list_sessions(uid)
        wrong: list[str] = []
        for name, call in _calls_on(sid, uid):
            try:
                await call(store)
            except ValidationError as exc:
                if exc.code != "validation_error" or exc.retryable:
                    wrong.append(f"{name}: {exc.code} retryable={exc.retryable}")
                if "session_id=" in name and not re.search(r"\bsession_id\b", str(exc)):
                    wrong.append(f"{name}: the message does not name session_id: {exc}")
            except BaseException as exc:
                wrong.append(f"{name}: {type(exc).__module__}.{type(exc).__name__}: {exc!s:.80}")
            else:
                wrong.append(f"{name}: accepted")
        assert wrong == [], "\n".join(wrong)
        assert await snapshot(store, sid) == before
        assert await store.list_sessions(uid) == listing

    @rule("INP-5")
    async def test_INP_5_closed_store_raises_store_unavailable(
        self, store_factory: StoreFactory
    ) -> None:
        sid, uid = "inp5-s", "inp5-u"
        closed = store_factory()
        async with closed:
            await _filled(closed, sid, uid)
        wrong: list[str] = []
        # The closed store says so first, whatever the arguments.
        for name, call in _unopened_calls(sid, uid):
            miss = await _unrefused(
                partial(call, closed), StoreUnavailableError, "answered on a closed store"
            )
            if miss is not None:
                wrong.append(f"{name}: {miss}")
        assert wrong == [], "\n".join(wrong)
        with pytest.raises(StoreUnavailableError):
            async with closed:
                pass
        async with store_factory() as fresh:
            assert (await fresh.get_session(sid)) is not None

    @rule("INP-7")
    async def test_INP_7_a_store_not_yet_open_refuses_every_call_or_none(
        self, store_factory: StoreFactory
    ) -> None:
        sid, uid = "inp7-s", "inp7-u"
        async with store_factory() as store:
            await _filled(store, sid, uid)
            before = await snapshot(store, sid)
        unopened = store_factory()
        # As on a closed store, the store says so first, whatever the arguments; a store
        # with nothing to open (the memory store) answers every call as an open one.
        refused: list[str] = []
        answered: list[str] = []
        for name, call in _unopened_calls(sid, uid):
            miss = await _unrefused(partial(call, unopened), StoreUnavailableError, "answered")
            (answered if miss else refused).append(name)
        assert not refused or not answered, (
            f"refused {len(refused)} calls, e.g. {refused[:3]}, "
            f"and answered {len(answered)}, e.g. {answered[:3]}"
        )
        if refused:
            async with unopened:
                assert await snapshot(unopened, sid) == before

    @rule("INP-6")
    async def test_INP_6_forged_cursors_are_validation_errors(
        self, store: SessionStateStore
    ) -> None:
        sid, other, uid = "inp6-s", "inp6-t", "inp6-u"
        for session in (sid, other):
            await store.create_session(session, user_id=uid)
            await store.append_messages(session, commit(user(), user(), user()))
        desc = (await store.page_messages(sid, limit=1, order="desc")).next_cursor
        theirs = (await store.page_messages(other, limit=1)).next_cursor
        await store.create_session("inp6-x", user_id="inp6-v")
        await store.create_session("inp6-y", user_id="inp6-v")
        someone_elses = (await store.list_sessions("inp6-v", first=1)).next_cursor
        assert desc and theirs and someone_elses
        wrong: list[str] = []
        for cursor in [*_forged_cursors(sid, other, uid), desc, theirs, someone_elses]:
            for name, call in (
                ("asc", lambda c=cursor: store.page_messages(sid, cursor=c)),
                ("desc", lambda c=cursor: store.page_messages(sid, cursor=c, order="desc")),
                ("listing", lambda c=cursor: store.list_sessions(uid, cursor=c)),
            ):
                if name == "desc" and cursor == desc:
                    continue
                miss = await _unrefused(call, ValidationError, "honoured")
                if miss is not None:
                    wrong.append(f"{name} {cursor!r:.60}: {miss}")
        assert wrong == [], "\n".join(wrong)
