"""The backend authors' API: the engine seam and what an engine needs (docs/backends/writing.md).

Users of a store need only :mod:`helix_agents.core`. A backend is an
:class:`Engine` under core's :class:`StoreBase`, which implements every public
method and rule once; an engine that keeps a session's records in Python (the
memory store, the example store) uses the in-process engine's
:func:`apply_changes` and :func:`snapshot_of` as they are. Changes to this module
are listed under "Backend API" in the changelog.
"""

from .base import StoreBase
from .clock import utcnow
from .cursors import decode_message_cursor, encode_message_cursor
from .dumps import DUMP_WANT, SessionDump
from .expiry import DEFAULT_SWEEP_INTERVAL, OPTION_NAMES, ExpiryOptions, expiry_options
from .handles import SessionHandles
from .inprocess import (
    SessionRecords,
    SharedMerge,
    apply_changes,
    copy_prefix,
    dump_of,
    listed_of,
    scoped_maps_of,
    snapshot_of,
    summary_of,
)
from .inputs import check_id, check_text
from .limits import MAX_COUNT, check_max_messages
from .messages import dump_message_json, parse_message_json, parse_messages_json
from .registry import ENTRY_POINT_GROUP
from .seam import (
    Changes,
    Engine,
    NewSession,
    Queue,
    Refused,
    RowSpan,
    Snapshot,
    Want,
    head_of,
    rows_json,
)
from .urls import check_userinfo, redact_url

__all__ = [
    "DEFAULT_SWEEP_INTERVAL",
    "DUMP_WANT",
    "ENTRY_POINT_GROUP",
    "MAX_COUNT",
    "OPTION_NAMES",
    "Changes",
    "Engine",
    "ExpiryOptions",
    "NewSession",
    "Queue",
    "Refused",
    "RowSpan",
    "SessionHandles",
    "SessionDump",
    "SessionRecords",
    "SharedMerge",
    "Snapshot",
    "StoreBase",
    "Want",
    "apply_changes",
    "check_id",
    "check_max_messages",
    "check_text",
    "copy_prefix",
    "decode_message_cursor",
    "dump_message_json",
    "dump_of",
    "encode_message_cursor",
    "expiry_options",
    "head_of",
    "listed_of",
    "parse_message_json",
    "parse_messages_json",
    "check_userinfo",
    "redact_url",
    "rows_json",
    "scoped_maps_of",
    "snapshot_of",
    "summary_of",
    "utcnow",
]
