"""Large tool outputs shown to the model as their offload summary (OAI-6)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from helix_agents.core import SessionStateStore
from helix_agents.core.context import Budget, ContextStore, offload_output

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

__all__ = ["Offloader"]


class Offloader:
    """Swaps each ``function_call_output`` over the budget for its offload summary.

    The output is stored once per call id (the store's insert-once ``key``), so
    every later model call, in this run or another, shows the same reference. The
    SDK's item in the log stays exactly as the runner wrote it.
    """

    def __init__(self, store: SessionStateStore, session_id: str, budget: Budget) -> None:
        self.store = cast(ContextStore, store)
        self.session_id = session_id
        self.budget = budget
        self._shown: dict[str, str] = {}  # call id -> what the model is shown

    async def shown(self, items: list[TResponseInputItem]) -> list[TResponseInputItem]:
        """``items`` with every large tool output replaced by its summary (new dicts)."""
        names = {
            str(i.get("call_id")): str(i.get("name"))
            for i in items
            if i.get("type") == "function_call"
        }
        result: list[TResponseInputItem] = []
        for item in items:
            output: Any = item.get("output")
            if item.get("type") != "function_call_output" or not isinstance(output, str):
                result.append(item)
                continue
            call_id = str(item.get("call_id"))
            summary = self._shown.get(call_id)
            if summary is None:
                summary = await offload_output(
                    self.store,
                    self.session_id,
                    output,
                    budget=self.budget,
                    tool_name=names.get(call_id),
                    key=f"oai-output:{call_id}",
                )
                self._shown[call_id] = summary
            shown: Any = item if summary is output else {**item, "output": summary}
            result.append(shown)
        return result
