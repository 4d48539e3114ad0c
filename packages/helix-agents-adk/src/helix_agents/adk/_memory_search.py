"""The words of a memory search, its RE2 pattern, and ADK's rule for a match (ADKM-3)."""

from __future__ import annotations

import itertools
import re
import unicodedata

from google.adk.events.event import Event

from helix_agents.core.context import MAX_PATTERN_CHARS

__all__ = ["MAX_MEMORIES", "event_words", "pattern_of", "query_words", "score", "text_of"]

MAX_MEMORIES = 10
"""The most memories one search returns, as ADK's in-memory service."""

_WORD = re.compile(r"\w+")


def query_words(query: str) -> list[str]:
    """The query's distinct words, lowercased (NFC), in the order they first appear."""
    words = _WORD.findall(unicodedata.normalize("NFC", query).lower())
    return list(dict.fromkeys(words))


def pattern_of(words: list[str]) -> str | None:
    """A case-insensitive RE2 alternation of ``words`` within the pattern limit, or ``None``."""
    kept: list[str] = []
    for word in words:
        # A word is \\w characters only: nothing in it is special to RE2.
        if len("(?i)" + "|".join([*kept, word])) > MAX_PATTERN_CHARS:
            break
        kept.append(word)
    return "(?i)" + "|".join(kept) if kept else None


def text_of(event: Event) -> str:
    """The text an event is searched by: its text parts, joined by spaces."""
    parts = event.content.parts if event.content is not None and event.content.parts else []
    return " ".join(part.text for part in parts if part.text)


def event_words(text: str) -> set[str]:
    """The words an event matches on: its words, and each single-script run of a word
    mixing Latin and other scripts (Japanese runs no spaces between them)."""
    words = set(_WORD.findall(unicodedata.normalize("NFC", text).lower()))
    for word in list(words):
        if not word.isascii():
            words.update("".join(run) for _, run in itertools.groupby(word, _is_latin))
    return words


def _is_latin(char: str) -> bool:
    if char.isascii():
        return char.isalnum() or char == "_"
    return unicodedata.name(char, "").startswith("LATIN")


def score(words: list[str], text: str) -> int:
    """How many query ``words`` the event's ``text`` holds (a non-ASCII one also inside a word)."""
    found = event_words(text)
    lowered = unicodedata.normalize("NFC", text).lower()
    return sum(1 for w in words if w in found or (not w.isascii() and w in lowered))
