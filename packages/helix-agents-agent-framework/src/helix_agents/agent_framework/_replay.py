"""Which of a save's messages are new: a replayed transcript is stored once (MAF-6).

The rule of the newest Agent Framework release's own history providers, restated here
(their helper is private): the saved messages that follow the stored history where it
reappears in them, or that follow the longest overlap of the stored history's end with
their start; everything when neither holds. A lone stored user message without an id is
not taken for a replay: repeating an input is more likely than replaying one message.
When the stored history is longer than the save, only its last ``len(incoming)``
messages can overlap, so those are all the rule needs.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_framework import Message

from ._rows import identity

__all__ = ["new_messages"]


def _lone_user_text(existing: Sequence[Message], ids: Sequence[tuple[str, ...]]) -> bool:
    return existing[-1].role == "user" and ids[-1][0] != "id"


def new_messages(existing: Sequence[Message], incoming: Sequence[Message]) -> list[Message]:
    """The messages of ``incoming`` that are not a replay of ``existing``: always its end."""
    if not existing:
        return list(incoming)
    old = [identity(m) for m in existing]
    new = [identity(m) for m in incoming]
    for start in range(len(new) - len(old) + 1):
        if new[start : start + len(old)] == old:
            if start == 0 and len(old) == 1 and _lone_user_text(existing, old):
                break
            return list(incoming[start + len(old) :])
    for overlap in range(min(len(old), len(new)), 0, -1):
        if old[-overlap:] != new[:overlap]:
            continue
        if overlap == 1 and _lone_user_text(existing, old):
            continue
        return list(incoming[overlap:])
    return list(incoming)
