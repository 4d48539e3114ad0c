"""What the client and the Lua scripts exchange, by name: KEYS order, ARGV slots, replies.

The Lua side is generated from these tables when the scripts are composed
(:func:`lua_prelude`), so a script names its keys and arguments and never
counts them, and the client builds arguments and reads replies by name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ._keys import SESSION_KEYS

__all__ = [
    "APPEND",
    "APPEND_KEYS",
    "COMMIT",
    "COMMIT_REPLY",
    "COMMON",
    "POP",
    "REFUSAL_STATE",
    "REPLACE",
    "SCRIPT_ARGS",
    "SCRIPT_KEYS",
    "TRUNCATE",
    "Args",
    "check_script",
    "lua_prelude",
    "joined_reply",
    "refusal_state",
]

Kind = Literal["str", "int", "flag"]
_FROM_ARGV = {"str": "ARGV[{}]", "int": "tonumber(ARGV[{}])", "flag": "ARGV[{}] == '1'"}


@dataclass(frozen=True, slots=True)
class Args:
    """Named ARGV slots, from ``first`` on; a script's variable part starts after them."""

    first: int
    slots: tuple[tuple[str, Kind], ...]

    @property
    def rest(self) -> int:
        """The first ARGV index after these slots."""
        return self.first + len(self.slots)

    def lua(self) -> str:
        """``local a, b = ARGV[i], tonumber(ARGV[i + 1])``: the slots as Lua locals."""
        names = ", ".join(name for name, _ in self.slots)
        values = ", ".join(
            _FROM_ARGV[kind].format(self.first + i) for i, (_, kind) in enumerate(self.slots)
        )
        return f"local {names} = {values}\n"

    def pack(self, **values: Any) -> list[Any]:
        """The slots' values in ARGV order; flags become 1 or 0. Every slot must be given."""
        try:
            packed = [
                (1 if values[name] else 0) if kind == "flag" else values[name]
                for name, kind in self.slots
            ]
        except KeyError:
            packed = []
        # Every slot given and no other (cheaper than comparing the names as sets).
        if len(packed) != len(values) or len(values) != len(self.slots):
            raise TypeError(f"ARGV slots {[n for n, _ in self.slots]}, got {sorted(values)}")
        return packed


# ARGV[1..4] of every session write: session id, the store's clock in
# microseconds, the idle TTL in ms (0 = none), and whether the user index is
# updated inline (standalone) rather than by the client's second step (cluster).
COMMON = Args(1, (("SID", "str"), ("NOW", "int"), ("TTL", "int"), ("INLINE", "flag")))

# append_messages (lua/commit.lua). Then the rows, the context deliveries
# (key/offset pairs) and the late ones likewise, from ARGV[REST] on.
COMMIT = Args(
    COMMON.rest,
    (
        ("has_cid", "flag"),
        ("starting", "flag"),
        ("rewind", "int"),  # -1: none
        ("fenced", "flag"),
        ("expect", "int"),  # -1: none
        ("max_messages", "int"),  # 0: none
        ("n", "int"),  # rows
        ("n_ui", "int"),  # non-context rows
        ("n_ctx", "int"),  # context deliveries
        ("n_late", "int"),  # late-answer deliveries
        ("cid", "str"),
        ("run_id", "str"),
        ("fence", "str"),
    ),
)

# append_messages' common case (lua/append.lua): rows and at most a commit id, an
# expected count and a fence; then the n rows, from ARGV[REST] on.
APPEND = Args(
    COMMON.rest,
    (
        ("has_cid", "flag"),
        ("fenced", "flag"),
        ("expect", "int"),  # -1: none
        ("max_messages", "int"),  # 0: none
        ("n", "int"),
        ("n_ui", "int"),
        ("cid", "str"),
        ("fence", "str"),
    ),
)
# The only keys lua/append.lua touches: the checks, the rows, the commit id, retention's
# archive, and the pending approvals its listing summary counts (lua/_session.lua).
APPEND_KEYS = ("meta", "rows", "cmt", "cmtn", "arch", "appr")

# The fence of a write: whether there is one, and its run id.
_FENCE: tuple[tuple[str, Kind], ...] = (("fenced", "flag"), ("fence", "str"))
# pop_messages (lua/pop.lua): how many rows (1..500, checked by the client).
POP = Args(COMMON.rest, (("want", "int"), *_FENCE))
# truncate_messages (lua/truncate.lua).
TRUNCATE = Args(COMMON.rest, (("keep", "int"), *_FENCE))
# replace_messages (lua/replace.lua); then the n rows, from ARGV[REST] on.
REPLACE = Args(
    COMMON.rest,
    (
        ("keep", "int"),
        ("expect", "int"),
        ("max_messages", "int"),  # 0: none
        ("n", "int"),
        ("n_ui", "int"),
        *_FENCE,
    ),
)

# Each script's own named slots (the others still read ARGV by index after COMMON).
SCRIPT_ARGS: dict[str, Args] = {
    "append": APPEND,
    "commit": COMMIT,
    "pop": POP,
    "replace": REPLACE,
    "truncate": TRUNCATE,
}

# Write scripts that declare fewer keys than SESSION_KEYS (the others get them all).
SCRIPT_KEYS: dict[str, tuple[str, ...]] = {"append": APPEND_KEYS}

# A landed or replayed commit replies with these fields, ':'-joined in this order.
COMMIT_REPLY = ("first_index", "message_count", "replayed", "last_activity", "user_key")

# The session's meta fields every refusal carries after its code (lua/_session.lua refuse).
REFUSAL_STATE = ("count", "first", "run_id", "run_status", "run_started", "run_ended")


def _lua_list(names: Sequence[str]) -> str:
    return "{" + ", ".join(f"'{n}'" for n in names) + "}"


def lua_prelude(name: str) -> str:
    """The generated head of write script ``name``: its KEYS and ARGV as named locals."""
    declared = SCRIPT_KEYS.get(name, SESSION_KEYS)
    keys = ", ".join(key.upper() for key in declared)
    slots = ", ".join(f"KEYS[{i}]" for i in range(1, len(declared) + 1))
    text = (
        "-- Generated from _schema.py when the script is loaded.\n"
        f"local {keys} = {slots}\n"
        f"{COMMON.lua()}"
        f"local REFUSAL_STATE = {_lua_list(REFUSAL_STATE)}\n"
        f"local COMMIT_REPLY = {_lua_list(COMMIT_REPLY)}\n"
    )
    own = SCRIPT_ARGS.get(name)
    if own is not None:
        text += own.lua() + f"local REST = {own.rest}\n"
    return text


def check_script(name: str, body: str) -> None:
    """Refuse a script that reads a named ARGV slot by its index: it would drift."""
    own = SCRIPT_ARGS.get(name, COMMON)
    last = own.rest - 1
    for index in re.findall(r"ARGV\[(\d+)\]", body):
        if int(index) <= last:
            raise RuntimeError(f"lua/{name}.lua reads ARGV[{index}]: use the slot's name")


def joined_reply(fields: Sequence[str], reply: str) -> dict[str, str]:
    """``{name: value}`` of a reply joining ``fields`` with ``:`` (the last may hold ``:``)."""
    values = reply.split(":", len(fields) - 1)
    if len(values) != len(fields):
        raise RuntimeError(f"a script replied {reply!r}, not the fields {list(fields)}")
    return dict(zip(fields, values, strict=True))


def refusal_state(reply: Sequence[Any]) -> Mapping[str, Any]:
    """The session state a refusal ``[code, *REFUSAL_STATE values, *extras]`` carries."""
    return dict(zip(REFUSAL_STATE, reply[1 : 1 + len(REFUSAL_STATE)], strict=True))
