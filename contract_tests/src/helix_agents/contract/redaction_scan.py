"""What each backend's scan for redacted text shares (docs/lifecycle.md, RED-6): a
session whose rows hold a secret in every place a row can, and their redaction."""

from __future__ import annotations

from helix_agents.core import ChatMessage, ContextMessage, MessageCommit, SessionStateStore

__all__ = ["SECRET", "redact_secret_rows", "write_secret_rows"]

SECRET = "redact-me-8c1f2e0d"
"""The text a backend must no longer hold once the rows are redacted."""


async def write_secret_rows(store: SessionStateStore, session_id: str) -> None:
    """Create ``session_id`` with five rows holding :data:`SECRET` (content, content
    parts, tool call arguments, a tool answer, a context row) and one that does not."""
    await store.create_session(session_id, user_id="scan-user", metadata={"k": "v"})
    rows = (
        ChatMessage(role="user", content=f"my key is {SECRET}"),
        ChatMessage(role="user", content=[{"type": "text", "text": SECRET}]),
        ChatMessage(
            role="assistant",
            content=None,
            tool_calls=[{"id": "c1", "function": {"name": "f", "arguments": SECRET}}],
        ),
        ChatMessage(role="tool", content=SECRET, tool_call_id="c1"),
        ContextMessage(kind="memory", content=SECRET, memory_ids=[SECRET]),
        ChatMessage(role="assistant", content="nothing to hide"),
    )
    await store.append_messages(session_id, MessageCommit(messages=rows))


async def redact_secret_rows(store: SessionStateStore, session_id: str) -> None:
    """Redact the five rows :func:`write_secret_rows` wrote holding :data:`SECRET`."""
    for index in range(5):
        await store.redact_message(session_id, index, reason="holds a secret", actor="scan")
