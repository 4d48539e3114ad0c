"""From a script's refusal or a driver exception to the core error, with core's message.

A script refuses with a code and the state the check read; the client rebuilds
that state and runs core's own check on it, so the class, code and message are
exactly those of every other store.
"""

from __future__ import annotations

import os
import ssl
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from redis.exceptions import (
    AuthenticationError,
    AuthenticationWrongNumberOfArgsError,
    BusyLoadingError,
    InvalidResponse,
    MovedError,
    NoPermissionError,
    RedisClusterException,
    RedisError,
    ResponseError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from helix_agents.core import MessageCommit, StoreUnavailableError
from helix_agents.core.backend import (
    CommitState,
    assert_fence,
    assert_retained,
    check_checkpoint_count,
    check_commit,
    check_keep,
)
from helix_agents.core.errors import StoreMisconfiguredError, approval_not_found
from helix_agents.core.models import RunInfo
from helix_agents.core.refusals import raise_refusal

from ._codec import run_info
from ._schema import REFUSAL_STATE, refusal_state

__all__ = ["DRIVER_ERRORS", "SERVER", "Refusal", "driver_error", "raise_commit_refusal"]

SERVER = "the Redis script"  # who refused, in the error of a drift from core's rules

DRIVER_ERRORS = (RedisError, RedisClusterException, OSError)
# redis-py functions that run before a command is sent: a failure inside one sent nothing.
_CONNECTING = frozenset(
    {"connect", "connect_check_health", "_connect", "on_connect", "on_connect_check_health"}
)
_REDIS_PY = f"{os.sep}redis{os.sep}"
_AUTH = (AuthenticationError, AuthenticationWrongNumberOfArgsError)
# Error replies to a connection's handshake that a later attempt may not get.
_BUSY = ("max number of clients", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN")
# What a server that is not plain Redis (a TLS-only one, another protocol) does to our hello.
_HUNG_UP = ("Connection closed by server", "Connection reset by peer")
_HUNG_UP_HINT = " (during the handshake: is it a Redis server, and does it want rediss://?)"
# A cluster URL turns TLS on with a query option, not a scheme (docs/backends/redis.md).
_CLUSTER_HUNG_UP_HINT = (
    " (during the handshake: are the nodes Redis servers, and do they want TLS (ssl=true)?)"
)


def driver_error(
    exc: BaseException, session_id: str | None, *, write: bool, where: str = "Redis"
) -> StoreUnavailableError | StoreMisconfiguredError:
    """The core error for driver exception ``exc``; raise it ``from exc``.

    StoreMisconfiguredError when retrying cannot fix it (authentication, ACL,
    no such database, TLS, not a Redis server), else StoreUnavailableError,
    whose ``may_have_landed`` says a write was sent and its outcome is unknown.
    """
    prefix = "" if session_id is None else f"session {session_id!r}: "
    detail = f"{type(exc).__name__}: {exc}"
    reason = misconfiguration(exc)
    if reason is not None:
        return StoreMisconfiguredError(
            f"{prefix}{where} refused the store: {reason} ({detail})", session_id=session_id
        )
    # A plain error reply means the server refused the command before running it,
    # except for a script that failed while running (writes before it stay).
    message = str(exc)
    refused = isinstance(exc, ResponseError) and not (
        "user_script" in message or "running script" in message
    )
    connecting = _while_connecting(exc)
    what = "did not answer in time" if isinstance(exc, RedisTimeoutError) else "failed"
    detail += _hung_up_hint(exc)
    return StoreUnavailableError(
        f"{prefix}{where} {what}: {detail}",
        session_id=session_id,
        may_have_landed=write and not refused and not connecting,
    )


def misconfiguration(exc: BaseException) -> str | None:
    """Why retrying cannot fix ``exc`` (or what it was raised from), or ``None`` if it might."""
    for cause in _chain(exc):
        message = str(cause)
        if isinstance(cause, ssl.SSLError):
            return "TLS failed"
        if isinstance(cause, _AUTH):
            return "authentication failed"
        if isinstance(cause, NoPermissionError):
            return "the user may not run a command the store needs (ACL)"
        if isinstance(cause, InvalidResponse):
            return "the server does not speak the Redis protocol"
        if "DB index is out of range" in message:
            return "no such database"
        if "Cluster mode is not enabled" in message:
            return "the server is not a Redis Cluster (use redis://)"
        if isinstance(cause, MovedError):
            return "the server is a Redis Cluster node (use redis+cluster://)"
    if (
        isinstance(exc, ResponseError)
        and not isinstance(exc, BusyLoadingError)
        and not any(m in str(exc) for m in _BUSY)
        and _while_connecting(exc)
    ):
        return "the server refused a connection setting"
    return None


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _hung_up_hint(exc: BaseException) -> str:
    """A hint when the server hung up on the handshake (``exc`` or what it was raised from)."""
    for cause in _chain(exc):
        if (
            isinstance(cause, RedisConnectionError)
            and any(m in str(cause) for m in _HUNG_UP)
            and _while_connecting(cause)
        ):
            cluster = isinstance(exc, RedisClusterException)
            return _CLUSTER_HUNG_UP_HINT if cluster else _HUNG_UP_HINT
    return ""


def _while_connecting(exc: BaseException) -> bool:
    return any(
        frame.f_code.co_name in _CONNECTING and _REDIS_PY in frame.f_code.co_filename
        for frame, _ in traceback.walk_tb(exc.__traceback__)
    )


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
        """Read ``[code, *REFUSAL_STATE values, *extras]``."""
        state = refusal_state(reply)
        run = run_info({k: v for k, v in state.items() if k.startswith("run_") and v is not None})
        extras = reply[1 + len(REFUSAL_STATE) :]
        return cls(reply[0], int(state["count"]), int(state["first"]), run, extras)

    def raise_error(
        self,
        session_id: str,
        *,
        fence_run_id: str | None = None,
        keep: int | None = None,
        what: str = "",
        checkpoint: tuple[str, int] | None = None,
    ) -> NoReturn:
        """Raise the core error this refusal stands for, by replaying core's check on its state."""
        checks: dict[str, Callable[[], object]] = {
            "superseded": lambda: assert_fence(session_id, fence_run_id, self.run),
            "approval_not_found": lambda: _raise(approval_not_found(session_id, what)),
        }
        if keep is not None:
            checks["invalid"] = lambda: check_keep(session_id, keep, self.count)
            checks["retention"] = lambda: assert_retained(session_id, keep, self.first, self.count)
        if checkpoint is not None:
            checks["invalid"] = lambda: check_checkpoint_count(
                session_id, checkpoint[0], checkpoint[1], self.count
            )
        found = checks.get(self.code)
        raise_refusal(session_id, self.code, [] if found is None else [found], server=SERVER)


def _raise(err: Exception) -> NoReturn:
    raise err


def raise_commit_refusal(session_id: str, commit: MessageCommit, reply: Sequence[Any]) -> NoReturn:
    """Raise the error of a refused commit by running core's checks on the state it read."""
    refusal = Refusal.parse(reply)
    if refusal.code == "retention":  # the rewind reaches below the retained rows
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
    raise_refusal(
        session_id, refusal.code, [lambda: check_commit(session_id, commit, state)], server=SERVER
    )


def _delivered(keys: Sequence[str], pairs: Sequence[Any]) -> dict[str, int | None]:
    found: dict[str, int | None] = {}
    for i, key in enumerate(keys):
        present, index = pairs[2 * i], pairs[2 * i + 1]
        if int(present):
            found[key] = None if index is None else int(float(index))
    return found
