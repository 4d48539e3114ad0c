"""Key naming: every key of one session shares the hash tag ``{<session id>}``."""

from __future__ import annotations

from dataclasses import dataclass

from helix_agents.core import ValidationError

__all__ = ["SESSION_KEYS", "KeySpace", "map_siblings"]

# The KEYS order of lua/apply.lua and lua/read.lua, named in Lua by the upper-cased name
# (META, ROWS, ...); docs/backends/redis.md, "Key layout", says what each holds.
SESSION_KEYS = (
    "meta",  # hash: v (version), created, la, md, user, ukey, first, count, ui, run, cmpn, ws, pres
    "rows",  # list: retained rows, 'c' (context) or 'm' + JSON
    "q",  # hash: 'c:' + context item key / 'l:' + call id -> record JSON
    "qd",  # zset: delivered queue entry -> index of the delivering row
    "appr",  # hash: pending approval id -> JSON
    "done",  # set: resolved approval ids
    "ckpt",  # hash: checkpoint id -> JSON
    "ckptn",  # zset: checkpoint id -> message_count
    "ckptl",  # zset: checkpoint ids at score 0, for pages by id
    "runs",  # set: run ids the session has started
    "cmt",  # hash: commit id -> CommitResult JSON
    "cmtn",  # zset: commit id -> message_count
    "out",  # hash: 't:' + output id -> text, 'r:' + id -> OutputRef JSON, 'k:' + key -> id
    "cmp",  # list: compactions, oldest first: '<boundary> <summary row JSON>'
    "arch",  # list: archived rows in write order (CS-19): '<index> <stored row>'
    "scs",  # hash: the session's own scoped-state map, key -> JSON
    "scsj",  # hash: journal of app/user deltas not yet applied, sequence -> entry JSON
    "scsp",  # hash: map key -> highest journal sequence naming it (pending)
    "scss",  # hash: map key -> the writers' token a reader sealed (lua/scs_settle.lua)
)


def map_siblings(map_key: str) -> tuple[str, str, str, str]:
    """The writers, counter, marks and retired keys beside an app or user map, in its slot."""
    head = map_key.removesuffix("map")
    return head + "w", head + "c", head + "m", head + "r"


def _tag(value: str) -> str:
    # Braces would end the hash tag early; escaping keeps the mapping one-to-one.
    return value.replace("%", "%25").replace("{", "%7B").replace("}", "%7D")


@dataclass(frozen=True, slots=True)
class KeySpace:
    """The names of a store's keys, under ``<prefix>:[<namespace>:]``."""

    base: str

    @classmethod
    def build(cls, prefix: str, namespace: str | None) -> KeySpace:
        """Validate the prefix and namespace (no braces: they would change the hash tag)."""
        parts = [prefix] if namespace is None else [prefix, namespace]
        for part in parts:
            if not isinstance(part, str) or not part or "{" in part or "}" in part:
                raise ValidationError(
                    f"key prefix and namespace must be non-empty strings without braces, "
                    f"got {part!r}"
                )
        return cls("".join(f"{part}:" for part in parts))

    def session(self, session_id: str, names: tuple[str, ...] = SESSION_KEYS) -> list[str]:
        """The keys ``names`` of a session (default: all, in :data:`SESSION_KEYS` order)."""
        head = f"{self.base}{{{_tag(session_id)}}}:"
        return [head + name for name in names]

    def meta(self, session_id: str) -> str:
        """The session's hash of scalar fields."""
        return f"{self.base}{{{_tag(session_id)}}}:meta"

    def user(self, user_id: str) -> str:
        """The listing index of ``user_id``: a sorted set under the user's own hash tag."""
        return f"{self.base}user:{{{_tag(user_id)}}}"

    @property
    def every(self) -> str:
        """The store-wide listing index: every session id at score 0, in its own slot."""
        return f"{self.base}all"

    def scoped(self, scope: str, owner: str) -> tuple[str, str, str, str, str]:
        """An app or user map's keys, under the map's own hash tag: the map, its writers
        (session -> token), the token counter, the applied marks (session -> sequence), and
        the retired writers whose marks go after a while (session -> when, in ms)."""
        map_key = f"{self.base}scs:{{{_tag(f'{scope}:{owner}')}}}:map"
        return (map_key, *map_siblings(map_key))

    @property
    def pattern(self) -> str:
        """A ``SCAN MATCH`` pattern for every key of this key space."""
        escaped = "".join(f"\\{c}" if c in "*?[]\\" else c for c in self.base)
        return escaped + "*"
