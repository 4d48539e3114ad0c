"""Context rows as ADK events, and the commit that delivers queued items (ADKF-1, ADKF-3).

A hidden ``context`` row (a delivered context item or late-answer notice) reaches the
model as core lowers it for a provider without a ``context`` role: a ``user`` turn whose
text is :func:`~helix_agents.core.runtime.context_row_text`. Read through the plugin's
session service, each is an event of the session at its place in the log, so ADK puts it
in every later model request by itself. See docs/integrations/adk.md.
"""

from __future__ import annotations

import time

from google.adk.events.event import Event
from google.genai import types

from helix_agents.core import ContextMessage
from helix_agents.core.runtime import context_row_text

__all__ = ["CONTEXT_AUTHOR", "context_event"]

CONTEXT_AUTHOR = "user"
"""The author of a context row's event: the model reads it as a user turn."""


def context_event(row: ContextMessage, index: int, invocation_id: str = "") -> Event:
    """The event that shows context row ``index`` to the model.

    Its id names the row; its timestamp is the read's, so a read filtered by time keeps it.
    """
    text = context_row_text(row)
    return Event(
        id=f"helix-context-{index}",
        invocation_id=invocation_id,
        author=CONTEXT_AUTHOR,
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        timestamp=time.time(),
    )
