"""The machinery of the suite: capabilities, expected failures, and the override guard."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, ClassVar, NoReturn, Protocol, TypeVar

import pytest

from helix_agents.core import SessionStateStore

__all__ = [
    "REQUIRE_BACKENDS_ENV",
    "Capabilities",
    "ContractBase",
    "StoreFactory",
    "backend_unavailable",
    "rule",
    "rule_tests",
]

REQUIRE_BACKENDS_ENV = "HELIX_REQUIRE_BACKENDS"
"""Set to ``1`` to fail, not skip, when a backend's server is missing."""
_F = TypeVar("_F", bound=Callable[..., Coroutine[Any, Any, None]])


class StoreFactory(Protocol):
    """Opens a store (not yet entered) on the test's data; call it twice for two instances.

    Options are the store's own: ``max_messages=N`` (retention) and ``clock=`` (a
    callable returning the aware ``datetime`` the store stamps its writes with),
    so rules can make equal timestamps on purpose.
    """

    def __call__(self, **options: Any) -> SessionStateStore: ...


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a store can do; a rule whose capability is missing is skipped, naming it.

    * ``retention`` — honours the ``max_messages`` option (MSG-5, MSG-11);
    * ``shared_instances`` — two stores from the factory see the same data
      (the multi-writer rules EMC-2, IDEM-3, APR-2, RUN-5, MSG-9, MSG-10 and
      the SES-8 race);
    * ``handles`` — the store has ``session(id)`` and ``sessions(user_id)``
      (core's ``SessionHandles`` mixin; HND-2);
    * ``clock`` — the store stamps its writes with the factory's ``clock=``
      option (the rules on equal activity times, SES-6 and SES-7);
    * ``scoped_state`` — commits carry app, user and session state and
      ``get_scoped_state`` reads it (docs/scoped-state.md; SCS-1..5);
    * ``engine`` — the store is core's ``StoreBase`` over an engine
      (docs/backends/writing.md; ENG-1, ENG-2);
    * ``clock_idle_ttl`` — the store-wide ``idle_ttl`` option is core's, decided on
      the factory's clock (TTL-1, TTL-5); Redis's is its own, on server time
      (``test_redis_ttl.py``).
    """

    retention: bool = True
    shared_instances: bool = True
    handles: bool = True
    clock: bool = True
    scoped_state: bool = True
    engine: bool = True
    clock_idle_ttl: bool = True


def backend_unavailable(reason: str) -> NoReturn:
    """Skip with ``reason`` because a server is missing; fail instead when CI demands backends.

    Set ``HELIX_REQUIRE_BACKENDS=1`` to turn every such skip into a failure.
    """
    if os.environ.get(REQUIRE_BACKENDS_ENV, "") not in ("", "0"):
        pytest.fail(f"{reason} ({REQUIRE_BACKENDS_ENV} is set: a missing backend fails)")
    pytest.skip(reason)


def rule(rule_id: str, *, requires: str | tuple[str, ...] | None = None) -> Callable[[_F], _F]:
    """Mark a test as the check of ``rule_id``; ``requires`` names the :class:`Capabilities`
    flags it needs (one, or a tuple)."""

    def mark(func: _F) -> _F:
        func.__rule_id__ = rule_id  # type: ignore[attr-defined]
        func.__rule_requires__ = requires  # type: ignore[attr-defined]
        return func

    return mark


def needs(func: Callable[..., Any]) -> tuple[str, ...]:
    """The capability flags a rule test requires."""
    requires = getattr(func, "__rule_requires__", None)
    if requires is None:
        return ()
    return (requires,) if isinstance(requires, str) else tuple(requires)


def rule_tests(cls: type) -> dict[str, tuple[str, Callable[..., Any]]]:
    """Test name -> (rule id, function) for every rule test defined along ``cls``'s bases."""
    found: dict[str, tuple[str, Callable[..., Any]]] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            rule_id = getattr(value, "__rule_id__", None)
            if rule_id is not None and name.startswith("test_"):
                found[name] = (rule_id, value)
    return found


class ContractBase:
    """Applies ``capabilities`` and ``expected_failures`` and refuses silent opt-outs."""

    capabilities: ClassVar[Capabilities] = Capabilities()
    expected_failures: ClassVar[dict[str, str]] = {}
    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.anyio]
    _rules: ClassVar[dict[str, tuple[str, Callable[..., Any]]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("_contract_root", False) and ContractBase._is_suite(cls):
            cls._apply_contract()

    @staticmethod
    def _is_suite(cls: type) -> bool:
        return any(k.__dict__.get("_contract_root", False) for k in cls.__mro__[1:])

    @classmethod
    def _apply_contract(cls) -> None:
        root = next(k for k in cls.__mro__ if k.__dict__.get("_contract_root", False))
        rules = rule_tests(root)
        known_ids = {rule_id for rule_id, _ in rules.values()}
        unknown = set(cls.expected_failures) - known_ids
        if unknown:
            raise TypeError(
                f"{cls.__name__}.expected_failures names unknown rule ids: {sorted(unknown)}"
            )
        for name, (rule_id, func) in rules.items():
            current = getattr(cls, name, None)
            reason = cls.expected_failures.get(rule_id)
            if current is not func and reason is None:
                raise TypeError(
                    f"{cls.__name__} overrides or deletes {name} ({rule_id}) without listing "
                    f"{rule_id!r} in expected_failures: the contract allows no silent opt-outs"
                )
            marks: list[pytest.MarkDecorator] = []
            if reason is not None:
                marks.append(pytest.mark.xfail(reason=f"{rule_id}: {reason}", strict=True))
            missing = [n for n in needs(func) if not getattr(cls.capabilities, n)]
            if missing:
                marks.append(pytest.mark.skip(reason=f"store lacks capability {missing[0]!r}"))
            if marks and current is not None:
                setattr(cls, name, _with_marks(current, marks))

    @pytest.fixture
    def anyio_backend(self) -> str:
        """The contract runs on asyncio."""
        return "asyncio"


def _with_marks(func: Callable[..., Any], marks: list[pytest.MarkDecorator]) -> Any:
    # A fresh wrapper per subclass, so marks never leak onto the shared base test.
    @functools.wraps(func)
    async def wrapper(*args: Any, **kwargs: Any) -> None:
        await func(*args, **kwargs)

    wrapper.pytestmark = [  # type: ignore[attr-defined]
        *getattr(func, "pytestmark", []),
        *(m.mark for m in marks),
    ]
    return wrapper
