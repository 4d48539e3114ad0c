"""One item of every Responses-API input item type the SDK's ``TResponseInputItem`` names.

``test_items.py`` checks that this covers every type of the installed SDK.
Values are chosen to be hard to store exactly: non-ASCII text, a NUL, a lone
surrogate, floats, big integers, nulls, nesting and an unusual key order.
"""

from __future__ import annotations

from typing import Any

ITEMS: dict[str, dict[str, Any]] = {
    "message/user": {"role": "user", "content": "héllo ✓ 🧪 \x00 end"},
    "message/user-parts": {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "look at this"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "auto"},
            {"type": "input_file", "file_id": "file-1", "filename": "a.pdf"},
        ],
    },
    "message/system": {"role": "system", "content": "be brief"},
    "message/developer": {"role": "developer", "content": "lone \ud800 surrogate"},
    "message/assistant": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "hi there", "annotations": [], "logprobs": []}],
    },
    "file_search_call": {
        "id": "fs_1",
        "type": "file_search_call",
        "status": "completed",
        "queries": ["q"],
        "results": [{"file_id": "f", "score": 0.1, "attributes": {"n": 10**20}}],
    },
    "computer_call": {
        "id": "cc_1",
        "type": "computer_call",
        "call_id": "call_c",
        "status": "completed",
        "action": {"type": "click", "button": "left", "x": 1, "y": 2},
        "pending_safety_checks": [],
    },
    "computer_call_output": {
        "type": "computer_call_output",
        "call_id": "call_c",
        "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,AA"},
    },
    "web_search_call": {
        "id": "ws_1",
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": "weather"},
    },
    "function_call": {
        "type": "function_call",
        "call_id": "call_f",
        "name": "get_weather",
        "arguments": '{"city": "Zürich"}',
        "id": "fc_1",
        "status": "completed",
    },
    "function_call_output": {
        "type": "function_call_output",
        "call_id": "call_f",
        "output": [{"type": "input_text", "text": "sunny"}],
    },
    "tool_search_call": {
        "type": "tool_search_call",
        "id": "ts_1",
        "call_id": "call_t",
        "arguments": {"query": "files"},
        "status": "completed",
    },
    "tool_search_output": {
        "type": "tool_search_output",
        "id": "tso_1",
        "call_id": "call_t",
        "tools": [],
        "status": "completed",
    },
    "additional_tools": {"type": "additional_tools", "role": "developer", "tools": []},
    "configuration_update": {
        "type": "configuration_update",
        "id": "cu_1",
        "configuration": {"temperature": 0.7, "top_p": None},
    },
    "reasoning": {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "thinking"}],
        "encrypted_content": "gAAAA" + "x" * 64,
    },
    "compaction": {"type": "compaction", "id": "cmp_1", "encrypted_content": "c0mp4ct"},
    "image_generation_call": {
        "id": "ig_1",
        "type": "image_generation_call",
        "status": "completed",
        "result": "iVBORw0KGgo=",
    },
    "code_interpreter_call": {
        "id": "ci_1",
        "type": "code_interpreter_call",
        "status": "completed",
        "code": "print(1/3)",
        "container_id": "cntr",
        "outputs": [{"type": "logs", "logs": "0.3333333333333333"}],
    },
    "local_shell_call": {
        "id": "ls_1",
        "type": "local_shell_call",
        "call_id": "call_l",
        "status": "completed",
        "action": {"type": "exec", "command": ["ls", "-la"], "env": {}},
    },
    "local_shell_call_output": {
        "type": "local_shell_call_output",
        "id": "call_l",
        "output": "total 0\n",
    },
    "shell_call": {
        "type": "shell_call",
        "call_id": "call_s",
        "action": {"commands": ["echo hi"], "timeout_ms": 1000},
        "status": "completed",
    },
    "shell_call_output": {
        "type": "shell_call_output",
        "call_id": "call_s",
        "output": [{"stdout": "hi\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}],
    },
    "apply_patch_call": {
        "type": "apply_patch_call",
        "call_id": "call_p",
        "status": "completed",
        "operation": {"type": "update_file", "path": "a.py", "diff": "@@\n-a\n+b\n"},
    },
    "apply_patch_call_output": {
        "type": "apply_patch_call_output",
        "call_id": "call_p",
        "status": "completed",
        "output": "done",
    },
    "mcp_list_tools": {
        "id": "ml_1",
        "type": "mcp_list_tools",
        "server_label": "srv",
        "tools": [{"name": "t", "input_schema": {"type": "object"}}],
    },
    "mcp_approval_request": {
        "id": "mar_1",
        "type": "mcp_approval_request",
        "server_label": "srv",
        "name": "delete",
        "arguments": "{}",
    },
    "mcp_approval_response": {
        "type": "mcp_approval_response",
        "approval_request_id": "mar_1",
        "approve": False,
        "reason": None,
    },
    "mcp_call": {
        "id": "mc_1",
        "type": "mcp_call",
        "server_label": "srv",
        "name": "t",
        "arguments": "{}",
        "output": "ok",
        "error": None,
    },
    "custom_tool_call_output": {
        "type": "custom_tool_call_output",
        "call_id": "call_x",
        "output": "plain text",
    },
    "custom_tool_call": {
        "type": "custom_tool_call",
        "call_id": "call_x",
        "name": "grammar_tool",
        "input": "free-form",
    },
    "compaction_trigger": {"type": "compaction_trigger"},
    "item_reference": {"type": "item_reference", "id": "msg_1"},
    "program": {"type": "program", "id": "pg_1", "call_id": "call_g", "code": "x = 1"},
    "program_output": {
        "type": "program_output",
        "call_id": "call_g",
        "output": {"z": -0.0, "a": 1e300, "m": [1, 2.5, None, True]},
    },
}
"""Items by a name: their type, or ``message/<role>``."""

ROW_ROLES: dict[str, str] = {
    "message/user": "user",
    "message/user-parts": "user",
    "message/system": "system",
    "message/developer": "system",
    "message/assistant": "assistant",
    "additional_tools": "system",
    "computer_call_output": "tool",
    "function_call_output": "tool",
    "tool_search_output": "tool",
    "local_shell_call_output": "tool",
    "shell_call_output": "tool",
    "apply_patch_call_output": "tool",
    "mcp_approval_response": "tool",
    "custom_tool_call_output": "tool",
    "program_output": "tool",
}
"""The row role of each item; every other item is an ``assistant`` row."""
