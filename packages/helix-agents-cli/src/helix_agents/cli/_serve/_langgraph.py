"""A LangGraph checkpoint record as a person reads it (INS-4).

The LangGraph adapter stores each channel value, write and metadata in an encoded
form (docs/integrations/langgraph.md, "JSON only"): ``{"j": json}``,
``{"l": [...]}`` / ``{"u": [...]}`` (a list, a tuple), ``{"d": [[key, value], ...]}``,
and ``{"t": kind, "b": base64}`` for anything else through LangGraph's serializer.
This module undoes the first four into plain JSON and, when ``langgraph`` is
installed, loads the typed ones with the serializer as the adapter configures it
(pickle off, safe types only), then shows them as JSON or their ``repr``; without
``langgraph`` a typed value is shown as its kind and size.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

__all__ = ["LANGGRAPH_RECORDS", "decoded_state"]

SEP = "\x1f"
LANGGRAPH_RECORDS = (f"c{SEP}", f"w{SEP}")  # checkpoints and pending writes
_LOADABLE = frozenset({"msgpack", "bytes", "bytearray", "null"})


def _typed(kind: str, data: str) -> Any:
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return {"undecodable": kind}
    try:
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    except ImportError:
        return {"typed": kind, "bytes": len(raw)}
    serde = JsonPlusSerializer(pickle_fallback=False, allowed_json_modules=None)
    try:
        value = serde.loads_typed((kind, raw))
    except Exception:  # the serializer's refusal, whatever its class
        return {"undecodable": kind, "bytes": len(raw)}
    return _plain(value)


def _plain(value: Any) -> Any:
    """A loaded value as JSON: models by their fields, the rest as JSON or ``repr``."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return {"type": type(value).__name__, **dump(mode="json")}
        except Exception:
            return repr(value)
    if isinstance(value, bytes | bytearray):
        return {"bytes": len(value)}
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


def _key(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=repr)


def decode(doc: Any) -> Any:
    """The value an encoded ``doc`` holds, as JSON; ``doc`` itself if it is not encoded."""
    if isinstance(doc, dict) and len(doc) == 1:
        [(tag, body)] = doc.items()
        if tag == "j":
            return body
        if tag in ("l", "u") and isinstance(body, list):
            return [decode(item) for item in body]
        if tag == "d" and isinstance(body, list):
            pairs = [p for p in body if isinstance(p, list) and len(p) == 2]
            return {_key(decode(k)): decode(v) for k, v in pairs}
    if isinstance(doc, dict) and set(doc) == {"t", "b"}:
        kind, data = doc["t"], doc["b"]
        if kind in _LOADABLE and isinstance(data, str):
            return _typed(kind, data)
    return doc


def decoded_state(checkpoint_id: str, state: Any) -> Any | None:
    """The readable form of a LangGraph checkpoint or write record; ``None`` for any
    other checkpoint."""
    if not checkpoint_id.startswith(LANGGRAPH_RECORDS) or not isinstance(state, dict):
        return None
    if checkpoint_id.startswith(LANGGRAPH_RECORDS[0]):
        values = state.get("values")
        return {
            "ns": state.get("ns"),
            "id": state.get("id"),
            "parent": state.get("parent"),
            "checkpoint": decode(state.get("checkpoint")),
            "values": {k: decode(v) for k, v in values.items()}
            if isinstance(values, dict)
            else values,
            "metadata": decode(state.get("metadata")),
        }
    return {**state, "value": decode(state.get("value"))}
