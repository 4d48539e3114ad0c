"""Moving sessions between stores: the export file (docs/export.md).

:func:`export_lines` writes every record a store holds of the sessions named, and
the app and user maps of scoped state, as JSON Lines of format version 2;
:func:`import_lines` checks a whole file, then writes it into any store, one session
at a time, resuming an interrupted import and skipping what is already there.
:func:`dump_session` reads one session's every record as data (the session inspector's
listings of queued and delivered items, resolved approvals and outputs).
"""

from ._export import dump_session, export_lines
from ._import import ImportReport, check_export, import_lines
from ._reader import ExportFileError, ScopedMap, SessionBlock, read_export
from ._records import FORMAT, VERSION
from ._restore import Outcome, restore_session

__all__ = [
    "FORMAT",
    "VERSION",
    "ExportFileError",
    "ImportReport",
    "Outcome",
    "ScopedMap",
    "SessionBlock",
    "check_export",
    "dump_session",
    "export_lines",
    "import_lines",
    "read_export",
    "restore_session",
]
