"""Paged checkpoint reads and deletes of the SQLite store (CKP-3..CKP-6).

A page is one range scan of the primary key ``(session_id, checkpoint_id)``:
TEXT compares with the BINARY collation, the code point order of core's
:class:`~helix_agents.core.CheckpointRange`.
"""

from __future__ import annotations

import sqlite3

from helix_agents.core import Checkpoint
from helix_agents.core.backend import CheckpointRange

from ._rows import Clock, load_session, touch

__all__ = ["delete", "page"]

_PAGE = (
    "SELECT body FROM __agents_checkpoints WHERE session_id = ? AND checkpoint_id >= ?"
    " {high} ORDER BY checkpoint_id DESC LIMIT ?"
)
_PAGE_TO_END = _PAGE.format(high="")
_PAGE_BELOW = _PAGE.format(high="AND checkpoint_id < ?")


def page(db: sqlite3.Connection, sid: str, where: CheckpointRange) -> list[Checkpoint]:
    """The checkpoints of ``where``, greatest id first."""
    load_session(db, sid)
    if where.empty:
        return []
    if where.high is None:
        found = db.execute(_PAGE_TO_END, (sid, where.low, where.limit)).fetchall()
    else:
        found = db.execute(_PAGE_BELOW, (sid, where.low, where.high, where.limit)).fetchall()
    return [Checkpoint.model_validate_json(body) for (body,) in found]


def delete(db: sqlite3.Connection, sid: str, checkpoint_ids: list[str], clock: Clock) -> int:
    """Delete the named checkpoints in the write transaction; how many there were."""
    row = load_session(db, sid)
    gone = 0
    for cid in checkpoint_ids:
        gone += db.execute(
            "DELETE FROM __agents_checkpoints WHERE session_id = ? AND checkpoint_id = ?",
            (sid, cid),
        ).rowcount
    if gone:
        touch(db, row, clock)
    return gone
