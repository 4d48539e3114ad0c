"""The toolkit for writing a store: the shared rules every backend applies.

Users of a store need only :mod:`helix_agents.core`. This module is for backend
authors (see ``docs/backends/writing.md``): the commit pre-checks, the input
checks, cursor and page helpers, the storage encoding of messages, the refusal
table, the ``SessionHandles`` and ``ClosesOnExit`` mixins, the context
store's ``OutputReads`` mixin, and the rules on records kept in Python
containers (``cut_records`` and its kin) for in-process stores. It changes with
the rules; its changes are listed under "Backend API" in the changelog.
"""

from .base import StoreBase, row_message
from .checkpoint_pages import CheckpointRange, check_checkpoint_ids, checkpoint_range
from .clock import check_clock, utcnow
from .context.reads import OutputReads, output_not_found
from .cursors import (
    decode_message_cursor,
    decode_sessions_cursor,
    encode_message_cursor,
    encode_sessions_cursor,
)
from .edits import (
    check_pop_count,
    check_replace,
    check_replace_state,
    check_rows,
    plan_replace,
    pop_keep,
)
from .errors import approval_not_found, session_not_found
from .handles import SessionHandles
from .inprocess import (
    SessionRecords,
    SharedMerge,
    apply_changes,
    copy_prefix,
    snapshot_of,
    summary_of,
)
from .inputs import check_id, check_input, check_json, check_record, check_text
from .lifecycle import ClosesOnExit
from .limits import (
    MAX_COUNT,
    MAX_PAGE,
    check_listing_first,
    check_max_messages,
    check_page_args,
    check_tail_limit,
    next_page_cursor,
    page_window,
)
from .messages import dump_message_json, parse_message_json, parse_messages_json
from .refusals import REFUSALS, raise_refusal
from .registry import ENTRY_POINT_GROUP
from .rules import (
    CommitPlan,
    CommitState,
    approvals_in_order,
    assert_deliverable,
    assert_delivery_offsets,
    assert_fence,
    assert_retained,
    check_checkpoint_count,
    check_commit,
    check_finish_status,
    check_keep,
    check_limit,
    check_new_session,
    checkpoints_in_order,
    coerce,
    coerce_all,
    coerce_commit,
    commit_survives,
    new_session_id,
    next_activity,
    reopen_on_truncate,
    undelivered_in_order,
)
from .scoped import check_scope, check_scoped_deltas, merge_deltas
from .seam import Changes, Engine, NewSession, Refused, RowSpan, Snapshot, Want
from .urls import redact_url

__all__ = [
    "ENTRY_POINT_GROUP",
    "MAX_COUNT",
    "MAX_PAGE",
    "REFUSALS",
    "Changes",
    "CheckpointRange",
    "ClosesOnExit",
    "CommitPlan",
    "CommitState",
    "Engine",
    "NewSession",
    "OutputReads",
    "Refused",
    "RowSpan",
    "SessionHandles",
    "SessionRecords",
    "SharedMerge",
    "Snapshot",
    "StoreBase",
    "Want",
    "apply_changes",
    "approval_not_found",
    "approvals_in_order",
    "assert_deliverable",
    "assert_delivery_offsets",
    "assert_fence",
    "assert_retained",
    "check_checkpoint_count",
    "check_checkpoint_ids",
    "check_clock",
    "check_commit",
    "check_finish_status",
    "check_id",
    "check_input",
    "check_json",
    "check_keep",
    "check_limit",
    "check_listing_first",
    "check_max_messages",
    "check_new_session",
    "check_page_args",
    "check_pop_count",
    "check_record",
    "check_replace",
    "check_replace_state",
    "check_rows",
    "check_scope",
    "check_scoped_deltas",
    "check_tail_limit",
    "check_text",
    "checkpoint_range",
    "checkpoints_in_order",
    "coerce",
    "coerce_all",
    "coerce_commit",
    "copy_prefix",
    "commit_survives",
    "decode_message_cursor",
    "decode_sessions_cursor",
    "dump_message_json",
    "encode_message_cursor",
    "encode_sessions_cursor",
    "merge_deltas",
    "new_session_id",
    "next_activity",
    "next_page_cursor",
    "output_not_found",
    "page_window",
    "parse_message_json",
    "parse_messages_json",
    "plan_replace",
    "pop_keep",
    "raise_refusal",
    "redact_url",
    "reopen_on_truncate",
    "row_message",
    "session_not_found",
    "snapshot_of",
    "summary_of",
    "undelivered_in_order",
    "utcnow",
]
