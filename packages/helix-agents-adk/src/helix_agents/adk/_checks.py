"""ADP-4 and ADP-5 at the service's edge: what would not come back equal is refused first.

An event is kept as its JSON text; it is accepted when that text reads back as an
equal event and each of its fields is a JSON value core stores (depth, integers). A
pydantic model a tool returned, inside a function response, is the one exception: it is
kept as its JSON form and reads back as that dict, as ADK's own database service keeps it
(ADK's ``load_memory`` tool answers with one).
A state is a map of string keys to JSON values core stores, with no tuple (it would
come back a list). Every refusal is an :class:`AdkValidationError`, raised before
the service writes anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from google.adk.events.event import Event
from google.adk.sessions import State
from pydantic import BaseModel

from helix_agents.core import ScopedStateDelta, ValidationError
from helix_agents.core.inputs import check_json
from helix_agents.core.scoped import check_scoped_deltas

from . import _names
from .errors import AdkValidationError

__all__ = ["event_json", "refusing", "state_deltas", "without_temp"]


@contextmanager
def refusing() -> Iterator[None]:
    """Core's refusals (a name too long, say) raised as the adapter's own error."""
    try:
        yield
    except AdkValidationError:
        raise
    except ValidationError as exc:
        raise AdkValidationError(exc.message, session_id=exc.session_id) from exc


def _refused(sid: str, what: str) -> AdkValidationError:
    return AdkValidationError(f"session {sid!r}: {what}", session_id=sid)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}…{text[-10:]}"


def event_json(event: Event, sid: str) -> str:
    """The JSON text of ``event`` if it reads back equal and holds storable JSON."""
    try:
        text = event.model_dump_json()
        back = Event.model_validate_json(text)
        expected = _models_as_json(event)
        if back != expected:
            raise _refused(sid, f"event{_difference(expected, back)}")
        with refusing():
            for name, value in back.model_dump(mode="json").items():
                check_json(value, f"event.{name}", session_id=sid)
    except AdkValidationError:
        raise
    except (ValueError, TypeError, RecursionError) as exc:
        # Serialization errors (lone surrogates, objects JSON cannot hold) and parse errors
        # (too deep for the parser) alike; the message names the field that failed.
        raise _refused(
            sid, f"event{_unserializable(event)} cannot be stored as JSON: {_reason(exc)}"
        ) from exc
    return text


def _models_as_json(event: Event) -> Event:
    """``event`` with each pydantic model inside a function response as its JSON form (a
    copy; ``event`` itself when it holds none)."""
    parts = event.content.parts if event.content is not None else None
    if not parts or not any(
        part.function_response is not None and _holds_model(part.function_response.response)
        for part in parts
    ):
        return event
    copy = event.model_copy(deep=True)
    for part in copy.content.parts if copy.content and copy.content.parts else ():
        answer = part.function_response
        if answer is not None and answer.response is not None:
            answer.response = _as_json(answer.response)
    return copy


def _holds_model(value: object) -> bool:
    if isinstance(value, BaseModel):
        return True
    if isinstance(value, dict):
        return any(_holds_model(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_model(item) for item in value)
    return False


def _as_json(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {key: _as_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_json(item) for item in value]
    return value


def _reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text if len(text) <= 200 else f"{text[:200]}…"


def _unserializable(event: Event) -> str:
    """``.field`` of the first field of ``event`` that fails to serialize, or ``""``."""
    for name in type(event).model_fields:
        try:
            event.model_dump_json(include={name})
        except (ValueError, TypeError, RecursionError):
            return f".{name}"
    return ""


def _difference(event: Event, back: Event) -> str:
    """Where ``back`` differs from ``event``, with both values (``""`` if not found)."""
    sent, got = event.model_dump(), back.model_dump()
    for name, value in sent.items():
        if value != got.get(name) or type(value) is not type(got.get(name)):
            return _differs_at(value, got.get(name), f".{name}")
    return " would not come back equal"


def _differs_at(sent: Any, back: Any, path: str) -> str:
    if isinstance(sent, dict) and isinstance(back, dict) and list(sent) == list(back):
        for key, item in sent.items():
            if item != back[key] or type(item) is not type(back[key]):
                return _differs_at(item, back[key], f"{path}[{key!r}]")
    elif type(sent) is list and type(back) is list and len(sent) == len(back):
        for i, (item, again) in enumerate(zip(sent, back, strict=True)):
            if item != again or type(item) is not type(again):
                return _differs_at(item, again, f"{path}[{i}]")
    return f"{path}: {_shown(sent)} comes back as {_shown(back)}"


def without_temp(delta: object) -> object:
    """``delta`` without its ``temp:`` keys (never stored); what is not a map, as it is."""
    if not isinstance(delta, dict):
        return delta
    return {
        k: v
        for k, v in delta.items()
        if not (isinstance(k, str) and k.startswith(State.TEMP_PREFIX))
    }


def state_deltas(
    sid: str, app_name: str, user_id: str, state: object, field: str
) -> list[ScopedStateDelta]:
    """The ``app:``, ``user:`` and session parts of ``state`` (``temp:`` dropped), checked."""
    if not isinstance(state, dict):
        raise _refused(sid, f"{field} must be a dict, got {type(state).__name__}")
    app: dict[str, Any] = {}
    user: dict[str, Any] = {}
    own: dict[str, Any] = {}
    for key, value in state.items():
        if not isinstance(key, str):
            raise _refused(sid, f"{field} keys must be strings, got {_shown(key)}")
        if key.startswith(State.TEMP_PREFIX):
            continue
        with refusing():
            # Within its map, as core checks a delta's changes: the map is one level deep.
            check_json({key: value}, field, session_id=sid)
        tuple_at = _tuple_at(value)
        if tuple_at is not None:
            where = f"{field}[{_shown(key)}]{tuple_at}"
            raise _refused(sid, f"{where} is a tuple, which would come back a list")
        if key.startswith(State.APP_PREFIX):
            app[key.removeprefix(State.APP_PREFIX)] = value
        elif key.startswith(State.USER_PREFIX):
            user[key.removeprefix(State.USER_PREFIX)] = value
        else:
            own[key] = value
    deltas = []
    if own:
        deltas.append(ScopedStateDelta(scope="session", changes=own))
    if app:
        deltas.append(ScopedStateDelta(scope="app", owner=_names.app_owner(app_name), changes=app))
    if user:
        owner = _names.store_user_id(app_name, user_id)
        deltas.append(ScopedStateDelta(scope="user", owner=owner, changes=user))
    with refusing():
        check_scoped_deltas(sid, deltas)  # keys are ids; at most MAX_SCOPED_KEYS of them
    return deltas


def _tuple_at(value: Any) -> str | None:
    """The path of the first tuple inside a JSON value core accepted, or ``None``."""
    if isinstance(value, tuple):
        return ""
    if isinstance(value, dict):
        items: Iterable[tuple[object, Any]] = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        inner = _tuple_at(item)
        if inner is not None:
            return f"[{key!r}]{inner}"
    return None
