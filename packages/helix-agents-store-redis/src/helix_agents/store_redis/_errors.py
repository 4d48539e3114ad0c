"""From a script's refusal or a driver exception to the core error, with core's message.

A script refuses with a code and the state the check read; the client rebuilds
that state and runs core's own check on it, so the class, code and message are
exactly those of every other store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from redis.exceptions import RedisClusterException, RedisError, ResponseError

from helix_agents.core import (
    ApprovalNotFoundError,
    CommitState,
    MessageCommit,
    RunInfo,
    SessionNotFoundError,
    StateStoreError,
    StoreUnavailableError,
    assert_fence,
    assert_retained,
    check_checkpoint_count,
    check_commit,
    check_keep,
)

from ._codec import run_info

__all__ = ["DRIVER_ERRORS", "Refusal", "disagree", "raise_commit_refusal", "unavailable"]

DRIVER_ERRORS = (RedisError, RedisClusterException, OSError)


def unavailable(
    exc: BaseException, session_id: str | None, *, write: bool
) -> StoreUnavailableError:
    """``exc`` wrapped; ``may_have_landed`` when a write was sent and its outcome is unknown."""
    # A plain error reply means the server refused the command before running it,
    # except for a script that failed while running (writes before it stay).
    message = str(exc)
    refused = isinstance(exc, ResponseError) and not (
        "user_script" in message or "running script" in message
    )
    err = StoreUnavailableError(
        f"session {session_id!r}: Redis failed: {type(exc).__name__}: {exc}",
        session_id=session_id,
        may_have_landed=write and not refused,
    )
    err.__cause__ = exc
    return err


@dataclass(frozen=True, slots=True)
class Refusal:
    """A script's refusal: its code, the session's count and first index, its run, extras."""

    code: str
    count: int
    first: int
    run: RunInfo | None
    extra: Sequence[Any]

    @classmethod
    def parse(cls, reply: Sequence[Any]) -> Refusal:
        """Read ``{code, count, first, run_id, run_status, run_started, run_ended, ...}``."""
        fields = dict(
            zip(("run_id", "run_status", "run_started", "run_ended"), reply[3:7], strict=True)
        )
        run = run_info({k: v for k, v in fields.items() if v is not None})
        return cls(reply[0], int(reply[1]), int(reply[2]), run, reply[7:])

    def raise_error(
        self,
        session_id: str,
        *,
        fence_run_id: str | None = None,
        keep: int | None = None,
        what: str = "",
        checkpoint: tuple[str, int] | None = None,
    ) -> NoReturn:
        """Raise the core error this refusal stands for."""
        if self.code == "fence":
            assert_fence(session_id, fence_run_id, self.run)
        elif self.code == "keep" and keep is not None:
            check_keep(session_id, keep, self.count)
        elif self.code == "retained" and keep is not None:
            assert_retained(session_id, keep, self.first, self.count)
        elif self.code == "checkpoint" and checkpoint is not None:
            check_checkpoint_count(session_id, checkpoint[0], checkpoint[1], self.count)
        elif self.code == "approval":
            raise ApprovalNotFoundError(
                f"session {session_id!r}: no approval {what!r}", session_id=session_id
            )
        raise disagree(session_id, self.code)


def not_found(session_id: str) -> SessionNotFoundError:
    """The error of every method on a missing session."""
    return SessionNotFoundError(f"session {session_id!r} not found", session_id=session_id)


def raise_commit_refusal(session_id: str, commit: MessageCommit, reply: Sequence[Any]) -> NoReturn:
    """Raise the error of a refused commit by running core's checks on the state it read."""
    refusal = Refusal.parse(reply)
    if refusal.code == "retained":  # the rewind reaches below the retained rows
        refusal.raise_error(session_id, keep=int(refusal.extra[0]))
    used = bool(int(refusal.extra[0]))
    pairs = list(refusal.extra[1:])
    ctx_keys = [d.key for d in commit.deliver_context_items]
    late_keys = [d.call_id for d in commit.deliver_late_answers]
    state = CommitState(
        message_count=refusal.count,
        current_run=refusal.run,
        run_id_used=lambda _run_id: used,
        context_items=_delivered(ctx_keys, pairs[: 2 * len(ctx_keys)]),
        late_answers=_delivered(late_keys, pairs[2 * len(ctx_keys) :]),
    )
    check_commit(session_id, commit, state)
    raise disagree(session_id, refusal.code)


def _delivered(keys: Sequence[str], pairs: Sequence[Any]) -> dict[str, int | None]:
    found: dict[str, int | None] = {}
    for i, key in enumerate(keys):
        present, index = pairs[2 * i], pairs[2 * i + 1]
        if int(present):
            found[key] = None if index is None else int(float(index))
    return found


def disagree(session_id: str, code: str) -> StateStoreError:
    """The error when a script refused but core's check passes on the same state: a bug."""
    return StateStoreError(
        f"session {session_id!r}: the Redis script refused ({code}) where core's rules accept",
        session_id=session_id,
    )
