"""Value classes for the ``guard hook`` path: plain classes with ``__slots__``, not dataclasses.

Importing :mod:`dataclasses` pulls inspect, ast, dis and tokenize into every
``guard hook`` process, and defining each dataclass execs generated code: a few
milliseconds on a path whose goal is about what starting Python costs. A class
lists its fields in ``__slots__`` (in ``__init__``'s positional order) and writes
its own ``__init__``; these bases give it the value behaviour a dataclass has.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

__all__ = ["FrozenRecord", "Record"]

_Frozen = TypeVar("_Frozen", bound="FrozenRecord")


class Record:
    """Equality and repr by the values of ``__slots__`` (in field order); mutable, so unhashable."""

    __slots__: tuple[str, ...] = ()
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    def _fields(self) -> tuple[str, ...]:
        """The fields equality, hashing and repr look at (all of ``__slots__`` unless a class leaves some out)."""
        return self.__slots__

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{name}={getattr(self, name)!r}' for name in self._fields())})"


class FrozenRecord(Record):
    """A :class:`Record` set once in ``__init__`` (through :meth:`_assign`): hashed by value, copied with :meth:`replace`."""

    # the hash, kept once computed: a spec is a dict key on every call of a service or an SDK's gate,
    # and hashing it walks every field (its protected paths). Not a field: ``__slots__`` of a subclass lists those.
    __slots__ = ("_hashed",)
    _hashed: int

    def _assign(self, values: dict[str, Any]) -> None:
        """Set every field from ``values`` (``__init__`` passes ``locals()``): the one write a frozen value allows."""
        for name in self.__slots__:
            object.__setattr__(self, name, values[name])

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot assign {name!r} (use .replace())")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot delete {name!r}")

    def __hash__(self) -> int:  # type: ignore[override]
        try:
            return self._hashed
        except AttributeError:
            hashed = hash(self._values())
            object.__setattr__(self, "_hashed", hashed)
            return hashed

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle rebuild through __init__ (attributes cannot be set)
        return (type(self), tuple(getattr(self, name) for name in self.__slots__))

    def replace(self: _Frozen, **changes: Any) -> _Frozen:
        """A copy with ``changes``; an unknown field is a TypeError."""
        return type(self)(**{**{name: getattr(self, name) for name in self.__slots__}, **changes})
