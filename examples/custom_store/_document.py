"""One session as one JSON document, and the writes on it that core's rules plan."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pydantic

from helix_agents.core import (
    Checkpoint,
    CommitResult,
    ContextMessage,
    JsonObject,
    LateAnswer,
    MessageCommit,
    PendingApproval,
    RunInfo,
    StoredContextItem,
)
from helix_agents.core.backend import (
    CommitPlan,
    CommitState,
    assert_retained,
    cut_records,
    dump_message_json,
    parse_message_json,
)
from helix_agents.core.context import OutputRef

__all__ = ["ContextDoc", "SessionDoc"]


class _Doc(pydantic.BaseModel):
    def model_post_init(self, context: Any, /) -> None:
        """Count every field of the document as set, so that :meth:`SessionDoc.dump` keeps it
        (fields are changed in place, which pydantic does not see)."""
        self.__pydantic_fields_set__.update(type(self).model_fields)


class ContextDoc(_Doc):
    """A session's stored outputs, compactions and archived rows (docs/context-strategies.md)."""

    outputs: dict[str, tuple[OutputRef, str]] = {}  # output id -> (reference, text)
    keys: dict[str, str] = {}  # store_output key -> output id
    compactions: list[tuple[int, ContextMessage]] = []  # (boundary, summary row), oldest first
    archive: list[tuple[int, str]] = []  # (index, row JSON): rows retention moved out
    preserved: bool = False  # once true, retention archives rows instead of dropping them


class SessionDoc(_Doc):
    """Everything one session holds. Rows keep their absolute index: row ``i`` is
    ``rows[i - first_index]``; queued records carry the index of the row that
    delivered them, or ``None`` while queued."""

    id: str
    user_id: str | None
    created_at: datetime
    last_activity_at: datetime
    metadata: JsonObject
    rows: list[str] = []  # each row's JSON text (core's dump_message_json)
    first_index: int = 0
    dropped_ui: int = 0  # non-context rows that retention dropped
    current_run: RunInfo | None = None
    run_ids: list[str] = []
    items: dict[str, tuple[StoredContextItem, int | None]] = {}
    late: dict[str, tuple[LateAnswer, int | None]] = {}
    approvals: dict[str, PendingApproval] = {}
    resolved: set[str] = set()
    checkpoints: dict[str, Checkpoint] = {}
    commits: dict[str, CommitResult] = {}
    scoped: JsonObject = {}  # the session's scoped-state map (docs/scoped-state.md)
    context: ContextDoc = pydantic.Field(default_factory=ContextDoc)

    def dump(self) -> str:
        """The document's JSON text.

        ``exclude_unset`` keeps each record as its writer gave it: a default the
        writer left out stays out, as the contract reads records back.
        """
        return self.model_dump_json(by_alias=True, exclude_unset=True)

    @property
    def message_count(self) -> int:
        """Rows ever kept, retention's dropped ones included."""
        return self.first_index + len(self.rows)

    def commit_state(self, commit: MessageCommit) -> CommitState:
        """What core's ``check_commit`` needs to know about this session."""
        return CommitState(
            message_count=self.message_count,
            current_run=self.current_run,
            run_id_used=set(self.run_ids).__contains__,
            context_items={k: i for k, (_, i) in self.items.items()},
            late_answers={k: i for k, (_, i) in self.late.items()},
            replay=None if commit.commit_id is None else self.commits.get(commit.commit_id),
        )

    def cut(self, keep: int) -> None:
        """Drop rows at index >= ``keep`` and whatever hung on them (MSG-4, CI-6, IDEM-2)."""
        assert_retained(self.id, keep, self.first_index, self.message_count)
        del self.rows[keep - self.first_index :]
        # Re-open deliveries, drop checkpoints, commit ids and compactions past the cut.
        queues = (self.items, self.late)
        cut_records(keep, queues, self.checkpoints, self.commits, self.context.compactions)

    def apply(self, plan: CommitPlan, commit_id: str | None, now: datetime) -> None:
        """Write a plan that ``check_commit`` (or a replace) returned."""
        if plan.rewind_to is not None:
            self.cut(plan.rewind_to)
        if plan.run_id is not None:
            self.current_run = RunInfo(run_id=plan.run_id, status="live", started_at=now)
            self.run_ids.append(plan.run_id)
        self.rows.extend(dump_message_json(row, self.id) for row in plan.rows)
        for key, index in plan.context_deliveries:
            self.items[key] = (self.items[key][0], index)
        for key, index in plan.late_deliveries:
            self.late[key] = (self.late[key][0], index)
        self.scoped.update(plan.scoped_state.get(("session", self.id), {}))
        if commit_id is not None:
            self.commits[commit_id] = plan.result

    def retain(self, max_messages: int | None) -> None:
        """Keep the newest ``max_messages`` rows; indexes stay absolute (MSG-5)."""
        if max_messages is None or len(self.rows) <= max_messages:
            return
        drop = len(self.rows) - max_messages
        if self.context.preserved:  # CS-9: archive what retention drops
            self.context.archive.extend((self.first_index + i, self.rows[i]) for i in range(drop))
        self.dropped_ui += sum(not _is_context(row) for row in self.rows[:drop])
        del self.rows[:drop]
        self.first_index += drop

    def ui_count(self) -> int:
        """Rows that are not context rows, dropped ones included."""
        return self.dropped_ui + sum(not _is_context(row) for row in self.rows)


def _is_context(row: str) -> bool:
    return parse_message_json(row).role == "context"
