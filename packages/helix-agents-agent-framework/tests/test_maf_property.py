"""MAF-2, MAF-9 as a property: arbitrary arguments, properties and text: equal, or refused.

On the memory store (the rows' path through the store is the same on every backend; the
other backends run the rules' examples in test_maf_history.py). Equal means the
framework's ``to_dict`` of the message read back is that of the message saved, and the
values the caller gave (function arguments, additional properties) are equal as Python
values: nothing the framework's serialization dropped or changed was stored.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agent_framework import Content, Message
from hypothesis import event, given, settings
from hypothesis import strategies as st

from helix_agents.agent_framework import HelixHistoryProvider, MessageNotStorableError
from helix_agents.core import open_store
from helix_agents.core.messages import dump_message

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
_MAPS = st.dictionaries(st.text(max_size=5), _VALUES, max_size=4)


async def _check(args: dict[str, Any], props: dict[str, Any], text: str) -> None:
    call = Content.from_function_call("c1", "tool", arguments=args)
    said = Message("assistant", [call, Content.from_text(text)], additional_properties=props)
    async with open_store("memory://") as store:
        provider, state = HelixHistoryProvider(store), dict[str, Any]()
        await provider.get_messages("s", state=state)
        await provider.save_messages("s", [Message("user", [text])], state=state)
        before = [dump_message(m) for m in await store.get_messages("s")]
        refused: MessageNotStorableError | None = None
        try:
            await provider.save_messages("s", [said], state=state)
        except MessageNotStorableError as exc:
            refused = exc
        event("refused" if refused is not None else "stored")
        if refused is not None:
            assert (refused.session_id, refused.code, refused.index) == ("s", "validation_error", 0)
            assert [dump_message(m) for m in await store.get_messages("s")] == before
            return
        loaded = (await HelixHistoryProvider(store).get_messages("s"))[-1]
        assert loaded.to_dict() == said.to_dict()
        assert loaded.additional_properties == props
        assert loaded.contents[0].arguments == args
        assert loaded.text == text


@settings(max_examples=100, deadline=None)
@given(args=_MAPS, props=_MAPS, text=st.text())
def test_maf2_maf9_a_message_comes_back_equal_or_is_refused(
    args: dict[str, Any], props: dict[str, Any], text: str
) -> None:
    asyncio.run(_check(args, props, text))
