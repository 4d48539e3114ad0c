"""The page window ``lua/r_page.lua`` reads is held to core's ``page_window``."""

from __future__ import annotations

import pytest

from helix_agents.core import ChatMessage, StateStoreError
from helix_agents.store_redis._codec import pack_row
from helix_agents.store_redis._page import read_page


def _reply(head: str, n: int) -> str:
    rows = [pack_row(ChatMessage(role="user", content=str(i)), "s") for i in range(n)]
    return "\n".join([head, *rows])


def test_a_reply_on_core_s_window_is_the_page() -> None:
    """Rows [2, 4) of 6, first 1, descending: the rows newest first and a cursor on."""
    page = read_page("s", "desc", 4, 2, _reply("2:4:1:6", 2))
    assert [m.content for m in page.messages] == ["1", "0"]
    assert page.next_cursor is not None


@pytest.mark.parametrize(
    ("head", "n"),
    [
        ("1:3:1:6", 2),  # the script's window is not core's ([2, 4))
        ("2:4:1:6", 1),  # core's window, but fewer rows than it holds
    ],
)
def test_a_window_other_than_core_s_is_a_drift(head: str, n: int) -> None:
    """A script that drifted from core raises, rather than returning a wrong page."""
    with pytest.raises(StateStoreError) as caught:
        read_page("s", "desc", 4, 2, _reply(head, n))
    assert type(caught.value) is StateStoreError
    assert caught.value.code == "state_error"
