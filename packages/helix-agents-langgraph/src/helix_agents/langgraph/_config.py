"""What the saver reads from a LangGraph config: malformed input is a ValidationError."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from helix_agents.core import ValidationError
from helix_agents.core.inputs import check_id

from ._runs import check_thread

__all__ = ["checkpoint_id_of", "config_for", "namespace_of", "thread_of"]


def _configurable(config: Any) -> dict[str, Any]:
    conf = config.get("configurable") if isinstance(config, dict) else None
    if not isinstance(conf, dict):
        raise ValidationError("the config has no configurable dict")
    return conf


def thread_of(config: Any) -> str:
    """The config's thread id: an id the store takes, not the run index's."""
    thread = _configurable(config).get("thread_id")
    if thread is None:
        raise ValidationError("the config names no configurable thread_id")
    return check_thread(check_id(str(thread), "thread_id"))


def namespace_of(config: Any) -> str | None:
    """The config's ``checkpoint_ns``; ``None`` if it names none."""
    ns = _configurable(config).get("checkpoint_ns")
    if ns is not None and not isinstance(ns, str):
        raise ValidationError(f"checkpoint_ns must be a string, got {type(ns).__name__}")
    return ns


def checkpoint_id_of(config: Any) -> str | None:
    """The config's ``checkpoint_id``, or ``None``."""
    checkpoint_id = _configurable(config).get("checkpoint_id")
    if checkpoint_id is not None and not isinstance(checkpoint_id, str):
        raise ValidationError(f"checkpoint_id must be a string, got {type(checkpoint_id).__name__}")
    return checkpoint_id


def config_for(thread: str, ns: str, checkpoint_id: str) -> RunnableConfig:
    """The config that names one checkpoint."""
    return {
        "configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}
    }
