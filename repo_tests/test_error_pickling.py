"""Every public error class of every installed helix_agents package pickles to an equal error.

The classes are found by walking the packages' public modules, so a new error
(or a new package) is checked without an edit here.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import pickle
import pkgutil
import types
import typing
from collections.abc import Iterator
from typing import Any

import pytest

import helix_agents


def _public_modules() -> Iterator[types.ModuleType]:
    for info in pkgutil.walk_packages(helix_agents.__path__, "helix_agents."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            yield importlib.import_module(info.name)


def _public_errors() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for module in _public_modules():
        for name in getattr(module, "__all__", dir(module)):
            obj = getattr(module, name, None)
            if (
                not name.startswith("_")
                and isinstance(obj, type)
                and issubclass(obj, BaseException)
                and obj.__module__.startswith("helix_agents.")
            ):
                found.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return found


ERRORS = _public_errors()


def _sample(name: str, hint: Any) -> Any:
    """A value of type ``hint`` that no default has, so a lost field shows."""
    options = typing.get_args(hint) or (hint,)
    for option in options:
        if option is bool:
            return True
        if option is int:
            return 41
        if option is str:
            return f"{name}-value"
        if isinstance(option, type) and issubclass(option, enum.Enum):
            return list(option)[-1]
    raise AssertionError(f"no sample for {name}: {hint!r}")


def _instance(cls: type[BaseException]) -> tuple[BaseException, dict[str, Any]]:
    """An instance with every parameter of its ``__init__`` given, and those values."""
    hints = typing.get_type_hints(cls.__init__)
    args: list[Any] = []
    given: dict[str, Any] = {}
    for param in inspect.signature(cls).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        given[param.name] = _sample(param.name, hints.get(param.name, str))
        if param.kind is not param.KEYWORD_ONLY:
            args.append(given[param.name])
    kwargs = {name: given[name] for name in list(given)[len(args) :]}
    return cls(*args, **kwargs), given


def test_the_walk_finds_the_errors_of_core_context_and_an_adapter() -> None:
    names = set(ERRORS)
    assert {
        "helix_agents.core.errors.StateStoreError",
        "helix_agents.core.errors.StoreUnavailableError",
        "helix_agents.core.context.errors.OutputNotFoundError",
        "helix_agents.openai_agents.ItemNotJsonError",
    } <= names, sorted(names)


@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
@pytest.mark.parametrize("qualified", sorted(ERRORS))
def test_error_pickles_to_an_equal_error(qualified: str, protocol: int) -> None:
    cls = ERRORS[qualified]
    module = importlib.import_module(cls.__module__)
    assert getattr(module, cls.__qualname__) is cls, f"{qualified} is not where it says it is"
    err, given = _instance(cls)
    for name, value in given.items():
        assert getattr(err, name) == value, f"{qualified}.{name} is not kept"
    err.add_note("a note")

    copy = pickle.loads(pickle.dumps(err, protocol=protocol))

    assert type(copy) is cls
    assert (str(copy), copy.args) == (str(err), err.args)
    assert vars(copy) == vars(err)
    for name in ("code", "retryable", "may_have_landed", "session_id", "message"):
        assert getattr(copy, name, None) == getattr(err, name, None), name
