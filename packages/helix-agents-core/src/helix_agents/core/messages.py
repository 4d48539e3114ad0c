"""Rows of a session's log: chat rows, hidden context rows, and their parsing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, cast

import pydantic
from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator
from pydantic_core import PydanticSerializationError, to_json

from .errors import ValidationError

__all__ = [
    "ChatMessage",
    "ContextItem",
    "ContextKind",
    "ContextMessage",
    "JsonObject",
    "Message",
    "dump_message",
    "dump_message_json",
    "parse_message",
    "parse_message_json",
    "parse_messages_json",
]

JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object: string keys, JSON values."""
ContextKind: TypeAlias = Literal["instruction", "notice", "memory", "tools"]
"""What a context item carries into the conversation."""
ChatRole: TypeAlias = Literal["system", "user", "assistant", "tool"]


if TYPE_CHECKING:
    from pydantic._internal._model_construction import ModelMetaclass as _ModelMeta
else:
    _ModelMeta = type(BaseModel)


_model_init = BaseModel.__init__


class _ValueMeta(_ModelMeta):
    # Wrapping the call, not __init__: a custom __init__ would make pydantic run Python
    # code for every nested value it validates, which doubles the cost of reading rows.
    def __call__(cls, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        model = cast("type[BaseModel]", cls)
        try:
            if args or model.__init__ is not _model_init:
                return super().__call__(*args, **kwargs)
            # What BaseModel.__init__ does, without its frame and self_instance: half the
            # cost of building a small value (CommitResult 2.4 -> 1.2 us).
            return model.__pydantic_validator__.validate_python(kwargs)
        except pydantic.ValidationError as exc:
            raise ValidationError(f"invalid {cls.__name__}: {describe(exc)}") from None


class Value(BaseModel, metaclass=_ValueMeta):
    """Base of the public types: construction errors are :class:`ValidationError`."""


class ChatMessage(Value):
    """A row sent to or from the model: ``system``, ``user``, ``assistant`` or ``tool``.

    Provider fields beyond ``role``, ``content`` and ``id`` (``tool_calls``,
    ``tool_call_id``, ``name``, …) are kept exactly as given.
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    role: ChatRole
    content: str | list[JsonObject] | None
    id: str | None = None
    # Provider fields are validated as JSON values, like everything else in a row.
    __pydantic_extra__: dict[str, JsonValue] = Field(init=False)


class _ContextFields(Value):
    """Fields shared by a context item and the row that delivers it.

    ``memory_ids`` belongs to (and is required by) ``memory`` items; ``enable``,
    ``disable`` and ``phase`` belong to ``tools`` items.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    kind: ContextKind
    content: str
    memory_ids: list[str] | None = None
    enable: list[str] | None = None
    disable: list[str] | None = None
    phase: Literal["forced_completion"] | None = None
    source: str | None = None
    pass_: str | None = Field(default=None, alias="pass")
    cursor: str | None = None
    metadata: JsonObject | None = None
    provider_options: JsonObject | None = None

    @model_validator(mode="after")
    def _fields_fit_kind(self) -> _ContextFields:
        if self.kind == "memory" and self.memory_ids is None:
            raise ValueError("a memory context row needs memory_ids")
        if self.kind != "memory" and self.memory_ids is not None:
            raise ValueError(f"memory_ids belongs to memory rows, not {self.kind!r}")
        if self.kind != "tools":
            for name in ("enable", "disable", "phase"):
                if getattr(self, name) is not None:
                    raise ValueError(f"{name} belongs to tools rows, not {self.kind!r}")
        return self


class ContextItem(_ContextFields):
    """What a context row will carry once delivered: a context row without the row."""

    def to_message(self) -> ContextMessage:
        """The context row that delivers this item."""
        return ContextMessage.model_validate(
            {"role": "context", **self.model_dump(by_alias=True, exclude_unset=True)}
        )


class ContextMessage(_ContextFields):
    """A hidden ``context`` row: shown to the model, not to the user."""

    role: Literal["context"] = "context"

    def model_post_init(self, context: Any, /) -> None:
        # The role is part of the row even when left to its default, so that
        # dumps with exclude_unset (how rows are stored) keep it.
        self.__pydantic_fields_set__.add("role")

    def to_item(self) -> ContextItem:
        """The item this row carries, without the row."""
        data = self.model_dump(by_alias=True, exclude_unset=True)
        data.pop("role", None)
        return ContextItem.model_validate(data)


Message: TypeAlias = ChatMessage | ContextMessage
"""One row of a session's log."""
_CHAT_FIELDS = tuple(ChatMessage.model_fields)


def parse_message(obj: Any) -> Message:
    """Validate a JSON object (or a row) into the right :data:`Message` type.

    Raises :class:`ValidationError` naming the offending field.
    """
    if isinstance(obj, (ChatMessage, ContextMessage)):
        return obj
    if not isinstance(obj, dict):
        raise ValidationError(f"a message must be a JSON object, got {type(obj).__name__}")
    role = obj.get("role")
    model: type[ChatMessage] | type[ContextMessage]
    if role == "context":
        model = ContextMessage
    elif role in ("system", "user", "assistant", "tool"):
        model = ChatMessage
    else:
        raise ValidationError(f"unknown message role {role!r} (field 'role')")
    try:
        return model.model_validate(obj)
    except pydantic.ValidationError as exc:
        raise ValidationError(f"invalid {role} message: {describe(exc)}") from None


_Row = Annotated[ChatMessage | ContextMessage, Field(discriminator="role")]
_row_adapter: pydantic.TypeAdapter[Message] = pydantic.TypeAdapter(_Row)
_rows_adapter: pydantic.TypeAdapter[list[Message]] = pydantic.TypeAdapter(list[_Row])


def parse_message_json(data: str | bytes) -> Message:
    """Parse a row from its JSON text in one pass: what stores use to read rows back.

    Same result as ``parse_message(json.loads(data))``, about twice as fast.
    """
    try:
        return _row_adapter.validate_json(data)
    except pydantic.ValidationError as exc:
        raise ValidationError(f"invalid stored message: {describe(exc)}") from None


def parse_messages_json(data: str | bytes) -> list[Message]:
    """Rows from the JSON text of an array of them, in one pass: the same rows as
    :func:`parse_message_json` of each element."""
    try:
        return _rows_adapter.validate_json(data)
    except pydantic.ValidationError as exc:
        raise ValidationError(f"invalid stored message: {describe(exc)}") from None


def dump_message_json(message: Message, session_id: str | None = None) -> str:
    """The JSON text that :func:`parse_message_json` turns back into ``message``.

    Text that is not valid Unicode (a lone surrogate) is a :class:`ValidationError`.
    """
    if type(message) is ChatMessage:
        text = chat_row_json(message)
        if text is not None:
            return text
    return _dump_json(message, session_id)


def _dump_json(message: Message, session_id: str | None) -> str:
    """:func:`dump_message_json` without its fast path: what decides when that is unsure."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True)
    except PydanticSerializationError as exc:
        raise ValidationError(
            f"session {session_id!r}: a {message.role} row cannot be stored as JSON "
            f"(text with a lone surrogate is not valid Unicode): {exc}",
            session_id=session_id,
        ) from None


def chat_row_json(row: ChatMessage) -> str | None:
    """``row.model_dump_json(by_alias=True, exclude_unset=True)`` for a chat row whose
    declared fields are text or ``None``, in a third of the time; ``None`` when unsure.

    That dump writes the declared fields that were set, in order (none has an alias),
    then every provider field, each JSON value inferred by type as :func:`to_json` does.
    """
    fields_set = row.__pydantic_fields_set__
    out: dict[str, Any] = {}
    for name in _CHAT_FIELDS:
        if name in fields_set:
            value = getattr(row, name)
            if value is not None and type(value) is not str:
                return None
            out[name] = value
    if row.__pydantic_extra__:
        out.update(row.__pydantic_extra__)
    try:
        return to_json(out, inf_nan_mode="null").decode()  # as the model config writes them
    except (PydanticSerializationError, ValueError):
        return None  # model_dump_json then says what is wrong, as it always did


def dump_message(message: Message) -> dict[str, Any]:
    """The JSON object that :func:`parse_message` turns back into ``message``."""
    return message.model_dump(mode="json", by_alias=True, exclude_unset=True)


def describe(exc: pydantic.ValidationError) -> str:
    """One line naming each failing field of a pydantic error."""
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "value"
        parts.append(f"field {where!r}: {err['msg']}")
    return "; ".join(parts)
