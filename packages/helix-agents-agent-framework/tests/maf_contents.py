"""Messages that hold every content kind of the installed Agent Framework release.

The kinds are read from the ``type`` parameter of ``Content`` (a ``Literal``), so a kind
a new release adds is in the catalogue without an edit: built with its ``from_*``
constructor where one is listed here (with its optional fields set), else as a bare
``Content`` of that kind (a kind newer than this catalogue).
"""

from __future__ import annotations

import typing
import warnings
from collections.abc import Callable

from agent_framework import Content, Message

__all__ = ["all_messages", "content_kinds"]


def content_kinds() -> frozenset[str]:
    """Every ``Content.type`` the installed release declares."""
    hint = typing.get_type_hints(Content.__init__)["type"]
    return frozenset(typing.get_args(hint))


def _call() -> Content:
    return Content.from_function_call(
        "call-1",
        "lookup",
        arguments={"q": "é \U0001f600", "n": [1, 2.5, None, True], "deep": {"a": {"b": {}}}},
        additional_properties={"trace": "t-1"},
    )


BUILT: dict[str, Callable[[], Content]] = {
    "text": lambda: Content.from_text(
        "hello \u2028 wörld",
        annotations=[{"type": "citation", "title": "t", "url": "https://example.org/a"}],
        additional_properties={"k": [1, {"x": None}]},
    ),
    "text_reasoning": lambda: Content.from_text_reasoning(
        id="rs-1", text="thinking…", protected_data="opaque-signature"
    ),
    "data": lambda: Content.from_data(b"\x00\x01\xffbinary", "application/octet-stream"),
    "uri": lambda: Content.from_uri(
        "https://example.org/cat.png", media_type="image/png", additional_properties={"n": 1}
    ),
    "error": lambda: Content.from_error(message="boom", error_code="E1", error_details="trace"),
    "function_call": _call,
    "function_result": lambda: Content.from_function_result(
        "call-1", result={"rows": [1, 2], "text": "ok", "none": None}
    ),
    "usage": lambda: Content.from_usage(
        {"input_token_count": 10, "output_token_count": 5, "total_token_count": 15}
    ),
    "hosted_file": lambda: Content.from_hosted_file("file-1", media_type="text/plain", name="f"),
    "hosted_vector_store": lambda: Content.from_hosted_vector_store("vs-1"),
    "function_approval_request": lambda: Content.from_function_approval_request(
        "approval-1", _call()
    ),
    "function_approval_response": lambda: Content.from_function_approval_response(
        True, "approval-1", _call()
    ),
    "mcp_server_tool_call": lambda: Content.from_mcp_server_tool_call(
        "mcp-1", "search", server_name="docs", arguments={"q": "x"}
    ),
    "mcp_server_tool_result": lambda: Content.from_mcp_server_tool_result(
        "mcp-1", output=[{"type": "text", "text": "found"}]
    ),
    "code_interpreter_tool_call": lambda: Content.from_code_interpreter_tool_call(
        call_id="ci-1", inputs=[Content.from_text("print(1)")]
    ),
    "code_interpreter_tool_result": lambda: Content.from_code_interpreter_tool_result(
        call_id="ci-1", outputs=[Content.from_text("1")]
    ),
    "image_generation_tool_call": lambda: Content.from_image_generation_tool_call(image_id="i-1"),
    "image_generation_tool_result": lambda: Content.from_image_generation_tool_result(
        image_id="i-1",
        outputs=Content.from_uri("https://example.org/i.png", media_type="image/png"),
    ),
    "shell_tool_call": lambda: Content.from_shell_tool_call(
        call_id="sh-1", commands=["ls", "pwd"], timeout_ms=1000, status="completed"
    ),
    "shell_command_output": lambda: Content.from_shell_command_output(
        stdout="a\nb", stderr="", exit_code=0, timed_out=False
    ),
    "shell_tool_result": lambda: Content.from_shell_tool_result(
        call_id="sh-1", outputs=[Content.from_shell_command_output(stdout="ok", exit_code=0)]
    ),
    "search_tool_call": lambda: Content.from_search_tool_call(
        "se-1", tool_name="web_search", arguments={"q": "weather"}
    ),
    "search_tool_result": lambda: Content.from_search_tool_result(
        "se-1", tool_name="web_search", items=[Content.from_text("sunny")]
    ),
    "computer_tool_call": lambda: Content.from_computer_tool_call(
        id="cu-1", call_id="cu-1", actions=[{"type": "click", "x": 1, "y": 2}]
    ),
    "computer_tool_result": lambda: Content.from_computer_tool_result(
        call_id="cu-1",
        screenshot=Content.from_uri("https://example.org/s.png", media_type="image/png"),
    ),
    "oauth_consent_request": lambda: Content.from_oauth_consent_request(
        "https://example.org/consent"
    ),
}


def all_messages() -> list[Message]:
    """A user message, then assistant and tool messages holding every content kind."""
    kinds = sorted(content_kinds())
    with warnings.catch_warnings():
        # Building a kind the framework marks experimental (computer use) warns; reading
        # one back does not.
        warnings.filterwarnings("ignore", message=r".* is experimental")
        contents = [BUILT[kind]() if kind in BUILT else Content(kind) for kind in kinds]  # type: ignore[arg-type]
    return [
        Message("system", ["be brief"], author_name="setup"),
        Message("user", ["hi", Content.from_uri("data:text/plain;base64,aGk=")], message_id="m-1"),
        Message(
            "assistant",
            [c for c in contents if c.type != "function_result"],
            author_name="helper",
            message_id="m-2",
            additional_properties={"run": {"n": 1, "tags": ["a", "b"]}},
        ),
        Message("tool", [c for c in contents if c.type == "function_result"]),
    ]
