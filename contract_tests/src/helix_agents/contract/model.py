"""A small pure-Python model of the specification, for the state machine to compare against."""

from __future__ import annotations

from dataclasses import dataclass, field

from helix_agents.core import (
    MessageCountConflictError,
    RunSupersededError,
    SessionExistsError,
    SessionNotFoundError,
    ValidationError,
)
from helix_agents.core.errors import (
    ApprovalNotFoundError,
    ContextItemDeliveryConflictError,
    LateAnswerDeliveryConflictError,
)

__all__ = ["ModelSession", "SessionModel"]


@dataclass
class ModelSession:
    """What the model knows of one session."""

    rows: list[str] = field(default_factory=list)
    run: tuple[str, str] | None = None
    run_ids: set[str] = field(default_factory=set)
    items: dict[str, int | None] = field(default_factory=dict)
    late: dict[str, int | None] = field(default_factory=dict)
    checkpoints: dict[str, int] = field(default_factory=dict)
    commits: dict[str, tuple[int, int]] = field(default_factory=dict)
    pending: set[str] = field(default_factory=set)
    resolved: set[str] = field(default_factory=set)

    def cut(self, keep: int) -> None:
        """Truncate to ``keep`` rows, re-opening what they delivered, dropping what lay past it."""
        del self.rows[keep:]
        for queue in (self.items, self.late):
            for key, index in queue.items():
                if index is not None and index >= keep:
                    queue[key] = None
        self.checkpoints = {c: n for c, n in self.checkpoints.items() if n <= keep}
        self.commits = {c: r for c, r in self.commits.items() if r[1] <= keep}

    def fenced_by(self, run_id: str | None) -> bool:
        """Whether a write fenced on ``run_id`` must be refused."""
        return run_id is not None and self.run != (run_id, "live")


class SessionModel:
    """Sessions by id, each a :class:`ModelSession`; each method returns what the store must."""

    def __init__(self) -> None:
        self.sessions: dict[str, ModelSession] = {}

    def _get(self, sid: str) -> ModelSession:
        if sid not in self.sessions:
            raise SessionNotFoundError(sid)
        return self.sessions[sid]

    def create(self, sid: str) -> None:
        if sid in self.sessions:
            raise SessionExistsError(sid)
        self.sessions[sid] = ModelSession()

    def delete(self, sid: str) -> bool:
        return self.sessions.pop(sid, None) is not None

    def commit(
        self,
        sid: str,
        rows: list[str],
        *,
        run_id: str | None,
        rewind_to: int | None,
        fence: str | None,
        expect: int | None,
        deliver: list[tuple[str, int]],
        deliver_late: list[tuple[str, int]],
        commit_id: str | None,
    ) -> tuple[int, int, bool]:
        s = self._get(sid)
        if commit_id is not None and commit_id in s.commits:
            return (*s.commits[commit_id], True)
        if any(not 0 <= offset < len(rows) for _, offset in [*deliver, *deliver_late]):
            raise ValidationError(sid)
        if run_id is not None and (
            (rewind_to is not None and rewind_to > len(s.rows))
            or fence is not None
            or run_id in s.run_ids
        ):
            raise ValidationError(sid)
        if s.fenced_by(fence):
            raise RunSupersededError(sid)
        if run_id is None and expect is not None and expect != len(s.rows):
            raise MessageCountConflictError(sid)
        for queue, pairs, error in (
            (s.items, deliver, ContextItemDeliveryConflictError),
            (s.late, deliver_late, LateAnswerDeliveryConflictError),
        ):
            keys = [key for key, _ in pairs]
            for key in keys:
                if keys.count(key) > 1 or key not in queue:
                    raise error(sid)
                index = queue[key]
                if index is not None and (rewind_to is None or index < rewind_to):
                    raise error(sid)
        if rewind_to is not None:
            s.cut(rewind_to)
        if run_id is not None:
            s.run = (run_id, "live")
            s.run_ids.add(run_id)
        base = len(s.rows)
        s.rows += rows
        for key, offset in deliver:
            s.items[key] = base + offset
        for key, offset in deliver_late:
            s.late[key] = base + offset
        if commit_id is not None:
            s.commits[commit_id] = (base, len(s.rows))
        return base, len(s.rows), False

    def finish(self, sid: str, run_id: str, status: str) -> None:
        s = self._get(sid)
        if s.fenced_by(run_id):
            raise RunSupersededError(sid)
        s.run = (run_id, status)

    def record(self, sid: str, key: str, fence: str | None, *, late: bool = False) -> bool:
        s = self._get(sid)
        if s.fenced_by(fence):
            raise RunSupersededError(sid)
        queue = s.late if late else s.items
        if key in queue:
            return False
        queue[key] = None
        return True

    def save_checkpoint(self, sid: str, checkpoint_id: str, count: int, fence: str | None) -> bool:
        s = self._get(sid)
        if count > len(s.rows):
            raise ValidationError(sid)
        if s.fenced_by(fence):
            raise RunSupersededError(sid)
        if checkpoint_id in s.checkpoints:
            return False
        s.checkpoints[checkpoint_id] = count
        return True

    def truncate(self, sid: str, keep: int) -> None:
        s = self._get(sid)
        if not 0 <= keep <= len(s.rows):
            raise ValidationError(sid)
        s.cut(keep)

    def pop(self, sid: str, count: int, fence: str | None) -> list[str]:
        s = self._get(sid)
        if not 1 <= count <= 500:
            raise ValidationError(sid)
        if s.fenced_by(fence):
            raise RunSupersededError(sid)
        keep = max(0, len(s.rows) - count)
        popped = s.rows[keep:]
        s.cut(keep)
        return popped

    def replace(
        self, sid: str, keep: int, rows: list[str], expect: int, fence: str | None
    ) -> tuple[int, int, bool]:
        s = self._get(sid)
        if not 0 <= keep <= expect:
            raise ValidationError(sid)
        if s.fenced_by(fence):
            raise RunSupersededError(sid)
        if expect != len(s.rows):
            raise MessageCountConflictError(sid)
        s.cut(keep)
        s.rows += rows
        return keep, len(s.rows), False

    def clone(self, sid: str, target: str, up_to: int | None) -> None:
        s = self._get(sid)
        end = len(s.rows) if up_to is None else up_to
        if not 0 <= end <= len(s.rows):
            raise ValidationError(sid)
        if target in self.sessions:
            raise SessionExistsError(target)
        self.sessions[target] = ModelSession(
            rows=s.rows[:end],
            checkpoints={c: n for c, n in s.checkpoints.items() if n <= end},
        )

    def add_approval(self, sid: str, approval_id: str, fence: str | None = None) -> None:
        s = self._get(sid)
        if s.fenced_by(fence):
            raise RunSupersededError(sid)
        if approval_id not in s.resolved:
            s.pending.add(approval_id)

    def resolve(self, sid: str, approval_id: str) -> str:
        s = self._get(sid)
        if approval_id in s.resolved:
            return "already-resolved"
        if approval_id not in s.pending:
            raise ApprovalNotFoundError(sid)
        s.pending.discard(approval_id)
        s.resolved.add(approval_id)
        return "resolved"

    def clear(self, sid: str) -> None:
        s = self._get(sid)
        run, run_ids = s.run, s.run_ids
        if run is not None and run[1] == "live":
            run = (run[0], "cancelled")
        self.sessions[sid] = ModelSession(run=run, run_ids=run_ids)
