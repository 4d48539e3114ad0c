"""An engine's work on a session kept as Python containers (:class:`SessionRecords`):
the memory store holds them live, the example backend (docs/backends/writing.md) as
JSON documents. Applying a plan and reading a snapshot are written here once."""

from ._changes import SharedMerge, apply_changes
from ._checkpoints import CheckpointTable
from ._records import ContextRecords, SessionRecords
from ._snapshot import copy_prefix, dump_of, listed_of, scoped_maps_of, snapshot_of, summary_of

__all__ = [
    "CheckpointTable",
    "ContextRecords",
    "SessionRecords",
    "SharedMerge",
    "apply_changes",
    "copy_prefix",
    "dump_of",
    "listed_of",
    "scoped_maps_of",
    "snapshot_of",
    "summary_of",
]
