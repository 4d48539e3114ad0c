"""PAI-3, PAI-6 as a property: arbitrary tool arguments and text come back equal or are refused.

On the memory store (the rows' path through the store is the same on every backend; the
other backends run the rules' examples in test_pai_history.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)

from helix_agents.core import open_store
from helix_agents.core.messages import dump_message
from helix_agents.pydantic_ai import HelixHistory, MessageNotStorableError

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and infinities included: refused, never stored changed
    | st.text()  # lone surrogates included
    | st.binary(max_size=8)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=4)
    ),
    max_leaves=20,
)


async def _check(args: dict[str, Any], text: str) -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(text)]),
        ModelResponse(parts=[ToolCallPart("tool", args), TextPart(text)]),
    ]
    async with open_store("memory://") as store:
        history = HelixHistory(store, "s")
        await history.load()
        await history.save(messages[:1])
        before = [dump_message(m) for m in await store.get_messages("s")]
        refused: MessageNotStorableError | None = None
        try:
            await history.save(messages[1:])
        except MessageNotStorableError as exc:
            refused = exc
        event("refused" if refused is not None else "stored")
        if refused is not None:
            assert (refused.session_id, refused.code) == ("s", "validation_error")
            assert [dump_message(m) for m in await store.get_messages("s")] == before
            return
        loaded = await HelixHistory(store, "s").load()
        dump = ModelMessagesTypeAdapter.dump_python
        assert dump(loaded) == dump(messages)


@settings(max_examples=150, deadline=None)
@given(args=st.dictionaries(st.text(max_size=5), _VALUES, max_size=4), text=st.text())
def test_pai3_pai6_a_message_comes_back_equal_or_is_refused(
    args: dict[str, Any], text: str
) -> None:
    asyncio.run(_check(args, text))
