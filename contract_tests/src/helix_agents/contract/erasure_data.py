"""What the erasure rules and each backend's erasure scan share (docs/lifecycle.md,
ERA-1, ERA-5): a user whose sessions hold a secret in every kind of record."""

from __future__ import annotations

from helix_agents.core import ChatMessage, ScopedStateDelta, SessionStateStore
from helix_agents.core.transfer import export_lines

from ._helpers import approval, checkpoint, commit, item, late, notice, user
from .rules_context import ctx

__all__ = ["ERASED_TEXT", "whole_export", "write_user_data"]

ERASED_TEXT = "erase-me-6b0d93"
"""The text every record of the erased user's sessions holds."""


async def write_user_data(store: SessionStateStore, user_id: str, session_ids: list[str]) -> None:
    """Create ``session_ids`` for ``user_id``, each with rows, an archive, a queued item
    and late answer, a pending approval, a checkpoint and an output holding
    :data:`ERASED_TEXT`, and the user's and the session's maps of scoped state."""
    for sid in session_ids:
        await store.create_session(sid, user_id=user_id, metadata={"note": ERASED_TEXT})
        prefs = ScopedStateDelta(scope="user", owner=user_id, changes={"k": ERASED_TEXT})
        own = ScopedStateDelta(scope="session", changes={"k": ERASED_TEXT})
        rows = (
            user(f"my address is {ERASED_TEXT}"),
            ChatMessage(role="assistant", content="noted", id=f"row-{ERASED_TEXT}"),
            notice(ERASED_TEXT),
        )
        await store.append_messages(sid, commit(*rows, scoped_state=(prefs, own)))
        await store.replace_messages(
            sid, 1, [user("summary")], expect_message_count=3, archive=True
        )
        await store.record_context_item(sid, item(f"k-{sid}", content=ERASED_TEXT))
        await store.record_late_answer(sid, late(f"call-{sid}", output=ERASED_TEXT))
        pending = approval(f"ap-{sid}").model_copy(update={"input": {"text": ERASED_TEXT}})
        await store.add_pending_approvals(sid, [pending])
        await store.save_checkpoint(sid, checkpoint(f"cp-{sid}", 1, state={"t": ERASED_TEXT}))
        await ctx(store).store_output(sid, ERASED_TEXT * 3, tool_name="lookup")
        await store.set_session_title(sid, f"title {ERASED_TEXT}")


async def whole_export(store: SessionStateStore) -> list[str]:
    """The lines of the export file of every session and scoped map of the store: what an
    erasure must leave nothing of the user in (ERA-5)."""
    ids: list[str] = []
    cursor = None
    while True:
        page = await store.list_all_sessions(first=200, cursor=cursor)
        ids += [s.id for s in page.sessions]
        if (cursor := page.next_cursor) is None:
            break
    return [line async for line in export_lines(store, ids, whole_store=True)]
