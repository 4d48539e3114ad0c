"""Large tool outputs shown to the model as their offload summary (OAI-6)."""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from helix_agents.core import SessionStateStore
from helix_agents.core.context import Budget, ContextStore, offload_output

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

__all__ = ["Offloader"]

MEMO_SIZE = 4096
"""How many summaries a process keeps per store, newest used first."""

_Key: TypeAlias = tuple[str, str, int, int, int]
# What each store showed for an output: (session, call id, threshold, len and hash of the
# text) -> its summary, None when shown whole. An SDK item never changes, so a later run
# (in this process) neither counts it again nor stores it again.
_memo: weakref.WeakKeyDictionary[Any, OrderedDict[_Key, str | None]] = weakref.WeakKeyDictionary()


class Offloader:
    """Swaps each ``function_call_output`` over the budget for its offload summary.

    The output is stored once per call id (the store's insert-once ``key``), so
    every later model call, in this run or another, shows the same reference; a
    process remembers what it showed, so it counts and stores each output once. The
    SDK's item in the log stays exactly as the runner wrote it.
    """

    def __init__(self, store: SessionStateStore, session_id: str, budget: Budget) -> None:
        self.store = cast(ContextStore, store)
        self.session_id = session_id
        self.budget = budget
        self._memo = _memo.setdefault(store, OrderedDict())

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
            key = (self.session_id, call_id, self.budget.offload_tokens, len(output), hash(output))
            if key in self._memo:
                self._memo.move_to_end(key)
                summary = self._memo[key] or output
            else:
                summary = await offload_output(
                    self.store,
                    self.session_id,
                    output,
                    budget=self.budget,
                    tool_name=names.get(call_id),
                    key=f"oai-output:{call_id}",
                )
                # A failed offload (the output inline after a note) is tried again next time.
                if summary is output or not summary.endswith(output):
                    self._memo[key] = None if summary is output else summary
                    if len(self._memo) > MEMO_SIZE:
                        self._memo.popitem(last=False)
            shown: Any = item if summary is output else {**item, "output": summary}
            result.append(shown)
        return result
