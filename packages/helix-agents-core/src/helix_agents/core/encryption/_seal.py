"""A session's records sealed under its data key, and opened again (docs/encryption.md).

What an engine must see stays as it is: ids, a row's role, counts, indexes and times.
Everything else a record carries becomes one AES-GCM box, as text: a row becomes a row
of the same role whose content is the sealed JSON of the whole row.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..base._plumbing import row_message
from ..context.models import OutputLine, OutputRef
from ..dumps import SessionDump
from ..errors import EncryptionKeyError
from ..messages import (
    ChatMessage,
    ContextItem,
    ContextMessage,
    JsonObject,
    Message,
    dump_message_json,
    parse_message_json,
)
from ..models import Checkpoint, LateAnswer, PendingApproval, StoredContextItem
from ..seam import Changes, Snapshot, StoredRow
from ._aead import open_box, seal_box

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["SessionCipher"]

_PREFIX = "hx1:"


@dataclass(frozen=True, slots=True)
class SessionCipher:
    """One session's data key; ``origin`` (the session it was made for, which a clone
    shares) and each record's kind are the associated data of every box."""

    session_id: str
    box: AESGCM
    origin: str

    def seal(self, kind: str, text: str) -> str:
        """``text`` sealed as a record of ``kind``."""
        sealed = seal_box(self.box, text.encode(), self._aad(kind))
        return _PREFIX + base64.b64encode(sealed).decode("ascii")

    def open(self, kind: str, sealed: object) -> str:
        """What :meth:`seal` sealed; anything else is an :class:`EncryptionKeyError`."""
        opened = None
        if isinstance(sealed, str) and sealed.startswith(_PREFIX):
            try:
                raw = base64.b64decode(sealed[len(_PREFIX) :], validate=True)
            except (binascii.Error, ValueError):
                raw = b""
            opened = open_box(self.box, raw, self._aad(kind))
        if opened is None:
            raise EncryptionKeyError(
                f"session {self.session_id!r}: a stored {kind} record does not open under "
                "the session's data key (a wrong key, or a record written without it)",
                session_id=self.session_id,
            )
        return opened.decode()

    def seal_json(self, kind: str, value: Any) -> str:
        """``value`` as compact JSON, sealed."""
        return self.seal(kind, json.dumps(value, ensure_ascii=False, separators=(",", ":")))

    def open_json(self, kind: str, sealed: object) -> Any:
        """The value :meth:`seal_json` sealed."""
        return json.loads(self.open(kind, sealed))

    def _aad(self, kind: str) -> bytes:
        return f"helix-agents/{self.origin}/{kind}".encode()

    # Rows
    def seal_row(self, row: Message) -> Message:
        """A row of the same role whose content is the sealed row."""
        if isinstance(row, ContextMessage):
            return self.seal_context(row)
        return ChatMessage(role=row.role, content=self.seal("row", dump_message_json(row)))

    def seal_context(self, row: ContextMessage) -> ContextMessage:
        """A context row sealed: a ``notice`` whose content is the sealed row."""
        return ContextMessage(kind="notice", content=self.seal("row", dump_message_json(row)))

    def open_row(self, row: StoredRow) -> Message:
        """The row :meth:`seal_row` sealed."""
        return parse_message_json(self.open("row", row_message(row).content))

    def open_context(self, row: StoredRow) -> ContextMessage:
        """The context row :meth:`seal_context` sealed."""
        opened = self.open_row(row)
        assert isinstance(opened, ContextMessage)  # sealed as one, under this key
        return opened

    # Other records
    def seal_output(self, ref: OutputRef, text: str) -> tuple[OutputRef, str]:
        """An output's text, its previews' lines and its tool name, sealed."""
        return self.seal_ref(ref), self.seal("output", text)

    def open_output(self, output: tuple[OutputRef, str]) -> tuple[OutputRef, str]:
        """The output :meth:`seal_output` sealed; its text ``""`` when the read did not ask
        for it (``Want.output_text``), as engines answer."""
        ref, text = output
        return self.open_ref(ref), text and self.open("output", text)

    def seal_ref(self, ref: OutputRef) -> OutputRef:
        """An output's description with its preview lines and tool name sealed."""
        return ref.model_copy(update=self._ref_fields(ref, self.seal))

    def open_ref(self, ref: OutputRef) -> OutputRef:
        """The description :meth:`seal_ref` sealed."""
        return ref.model_copy(update=self._ref_fields(ref, self.open))

    @staticmethod
    def _ref_fields(ref: OutputRef, how: Any) -> dict[str, Any]:
        def lines(found: tuple[OutputLine, ...]) -> tuple[OutputLine, ...]:
            return tuple(line.model_copy(update={"text": how("line", line.text)}) for line in found)

        tool = None if ref.tool_name is None else how("tool", ref.tool_name)
        return {
            "tool_name": tool,
            "head": lines(ref.head),
            "tail": lines(ref.tail),
            "highlights": lines(ref.highlights),
        }

    def seal_queued(self, record: StoredContextItem | LateAnswer) -> StoredContextItem | LateAnswer:
        """A queued context item or late answer with its contents sealed."""
        if isinstance(record, LateAnswer):
            both = {"t": record.tool_name, "o": record.output}
            return record.model_copy(
                update={"tool_name": "", "output": self.seal_json("late", both)}
            )
        item = record.item.model_dump(mode="json", by_alias=True, exclude_unset=True)
        sealed = ContextItem(kind="notice", content=self.seal_json("item", item))
        return record.model_copy(update={"item": sealed})

    def open_queued(self, record: StoredContextItem | LateAnswer) -> StoredContextItem | LateAnswer:
        """The record :meth:`seal_queued` sealed."""
        if isinstance(record, LateAnswer):
            both = self.open_json("late", record.output)
            return record.model_copy(update={"tool_name": both["t"], "output": both["o"]})
        item = ContextItem.model_validate(self.open_json("item", record.item.content))
        return record.model_copy(update={"item": item})

    def seal_approval(self, approval: PendingApproval) -> PendingApproval:
        """A pending approval with its tool name and input sealed."""
        both = self.seal_json("approval", {"t": approval.tool_name, "i": approval.input})
        return approval.model_copy(update={"tool_name": "", "input": both})

    def open_approval(self, approval: PendingApproval) -> PendingApproval:
        """The approval :meth:`seal_approval` sealed."""
        both = self.open_json("approval", approval.input)
        return approval.model_copy(update={"tool_name": both["t"], "input": both["i"]})

    def seal_checkpoint(self, checkpoint: Checkpoint) -> Checkpoint:
        """A checkpoint with its state sealed."""
        return checkpoint.model_copy(update={"state": self.seal_json("state", checkpoint.state)})

    def open_checkpoint(self, checkpoint: Checkpoint) -> Checkpoint:
        """The checkpoint :meth:`seal_checkpoint` sealed."""
        return checkpoint.model_copy(update={"state": self.open_json("state", checkpoint.state)})

    def seal_scoped(
        self, scoped: Mapping[tuple[str, str], Mapping[str, Any]]
    ) -> dict[tuple[str, str], Mapping[str, Any]]:
        """Deltas of scoped state with the ``session`` map's values sealed (app and user
        maps belong to no session, and stay as they are)."""
        return {
            (scope, owner): (
                {k: self.seal_json("scoped", v) for k, v in values.items()}
                if scope == "session"
                else values
            )
            for (scope, owner), values in scoped.items()
        }

    def open_scoped(self, values: JsonObject) -> JsonObject:
        """The session map :meth:`seal_scoped` sealed."""
        return {k: self.open_json("scoped", v) for k, v in values.items()}

    # Whole writes and reads
    def seal_changes(self, changes: Changes, metadata: JsonObject | None) -> Changes:
        """Every record ``changes`` writes, sealed; ``metadata`` is its stored metadata
        with the session's key record."""
        redact = changes.redact
        compaction = changes.compaction
        return replace(
            changes,
            rows=[self.seal_row(row) for row in changes.rows],
            rows_json=None,
            enqueue=None if changes.enqueue is None else self.seal_queued(changes.enqueue),
            scoped=self.seal_scoped(changes.scoped) if changes.scoped else changes.scoped,
            archived=[(i, self.seal_row(row)) for i, row in changes.archived],
            approvals=[self.seal_approval(a) for a in changes.approvals],
            checkpoint=(
                None if changes.checkpoint is None else self.seal_checkpoint(changes.checkpoint)
            ),
            output=None if changes.output is None else self.seal_output(*changes.output),
            compaction=None
            if compaction is None
            else (compaction[0], self.seal_context(compaction[1])),
            metadata=metadata,
            redact=None if redact is None else (redact[0], self.seal_row(redact[1])),
        )

    def open_snapshot(self, snap: Snapshot, metadata: JsonObject) -> Snapshot:
        """``snap`` with every record opened and ``metadata`` (the key record taken out)."""
        return replace(
            snap,
            metadata=metadata,
            named_checkpoints={
                cid: self.open_checkpoint(cp) for cid, cp in snap.named_checkpoints.items()
            },
            keyed_output=None if snap.keyed_output is None else self.open_ref(snap.keyed_output),
            output=None if snap.output is None else self.open_output(snap.output),
            rows=[self.open_row(row) for row in snap.rows],
            queued=[self.open_queued(record) for record in snap.queued],
            pending=[self.open_approval(a) for a in snap.pending],
            checkpoints=[self.open_checkpoint(cp) for cp in snap.checkpoints],
            summary=None if snap.summary is None else self.open_context(snap.summary),
            archive=[(i, self.open_row(row)) for i, row in snap.archive],
            session_scoped=self.open_scoped(snap.session_scoped),
        )

    def open_dump(self, dump: SessionDump, snap: Snapshot) -> SessionDump:
        """``dump`` with every record opened; ``snap`` is its snapshot, opened."""
        return replace(
            dump,
            snapshot=snap,
            context_items=[(self._item(r), i) for r, i in dump.context_items],
            late_answers=[(self._late(r), i) for r, i in dump.late_answers],
            outputs=[self.open_output(o) for o in dump.outputs],
            compactions=[(i, self.open_context(row)) for i, row in dump.compactions],
        )

    def _item(self, record: StoredContextItem) -> StoredContextItem:
        opened = self.open_queued(record)
        assert isinstance(opened, StoredContextItem)
        return opened

    def _late(self, record: LateAnswer) -> LateAnswer:
        opened = self.open_queued(record)
        assert isinstance(opened, LateAnswer)
        return opened
