"""The run a graph invocation belongs to, as its config carries it (LGF-3)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from helix_agents.core import SessionStateStore, ValidationError
from helix_agents.core.inputs import check_id

__all__ = ["RUN_ID_KEY", "RUN_KEY", "ConfigRun", "fence_of", "removals_of", "run_of"]

RUN_ID_KEY = "helix_run_id"
"""A ``configurable`` key: the store's run that fences every write of the invocation."""
RUN_KEY = "helix_run"
"""A ``configurable`` key: the :class:`HelixGraphRun` the invocation belongs to."""


class ConfigRun(Protocol):
    """What the context tools need of the run in a config."""

    store: SessionStateStore
    session_id: str

    async def activate(self, source_name: str) -> str:
        """Activate a tool source; the text the model reads."""
        ...


def _configurable(config: Any) -> dict[str, Any]:
    conf = config.get("configurable") if isinstance(config, dict) else None
    return conf if isinstance(conf, dict) else {}


def fence_of(config: Any) -> str | None:
    """The run id that fences the writes of ``config``'s invocation, or ``None``."""
    fence = _configurable(config).get(RUN_ID_KEY)
    if fence is None:
        return None
    if not isinstance(fence, str):
        raise ValidationError(f"{RUN_ID_KEY} must be a string, got {type(fence).__name__}")
    return check_id(fence, RUN_ID_KEY)


class Removals(Protocol):
    """What the saver asks of the run in a config before it stores a task's writes."""

    async def archive_removed(
        self,
        writes: Sequence[tuple[str, Any]],
        values: Callable[[], Awaitable[Mapping[str, Any]]],
    ) -> None:
        """Archive the messages ``writes`` remove; ``values`` reads the checkpoint's channels."""
        ...


def removals_of(config: Any) -> Removals | None:
    """The run in ``config`` that archives the graph's own removals (LGF-12), if any."""
    run = _configurable(config).get(RUN_KEY)
    return run if hasattr(run, "archive_removed") else None


def run_of(config: Any) -> Any:
    """The run object ``config`` carries (``HelixGraphRun.config``), else ``ValidationError``."""
    run = _configurable(config).get(RUN_KEY)
    if run is None:
        raise ValidationError(
            f"the config carries no HelixGraphRun (configurable[{RUN_KEY!r}]): "
            "invoke the graph with run.config"
        )
    return run
