"""``dataclass`` for fluxgraph's own classes: the standard one, cheaper to create.

Python 3.11's ``dataclasses.dataclass`` compiles every method it adds from generated source
when the class is created: ``__init__``, ``__repr__`` and ``__eq__``, plus ``__hash__``,
``__setattr__`` and ``__delattr__`` for a frozen class and four more with ``order=True``. At
about 0.2 ms a compile, the 50-odd classes a ``fluxgraph check`` run imports spent 60 to 70 ms
there: a fifth of checking a whole repository of 80 Kustomizations (docs/performance.md).

This decorator lets ``dataclasses`` process the fields (so ``dataclasses.fields``,
``replace`` and ``asdict`` work, and ``is_dataclass`` is true) and compile only ``__init__``;
``__repr__``, ``__eq__``, ``__hash__``, the ordering methods and the frozen guard are shared
functions over an ``operator.attrgetter`` of the fields, which compare and hash as fast as the
generated ones. The behaviour is the standard one for the options fluxgraph uses (``frozen``,
``eq``, ``order``, ``slots``; fields with defaults, default factories, ``init=False``,
``repr=False``, ``compare=False``; ``__post_init__``); tests/test_dataclass.py compares the two
option by option. Anything else (``kw_only``, ``InitVar``, ``unsafe_hash``, ``match_args``
off, ...) is refused rather than approximated.
"""

from __future__ import annotations

import dataclasses
import operator
import reprlib
from collections.abc import Callable
from dataclasses import MISSING, FrozenInstanceError, field, fields, replace
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["dataclass", "field", "fields", "replace", "FrozenInstanceError"]

_T = TypeVar("_T", bound=type)
_FACTORY = object()  # stands for "use the default factory" in __init__'s signature


@overload
def dataclass(cls: _T, /) -> _T: ...
@overload
def dataclass(
    *, eq: bool = True, frozen: bool = False, order: bool = False, slots: bool = False
) -> Callable[[_T], _T]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def dataclass(
    cls: Any = None, /, *, eq: bool = True, frozen: bool = False, order: bool = False, slots: bool = False
) -> Any:
    """``dataclasses.dataclass`` with the options above (see the module doc)."""

    def wrap(c: _T) -> _T:
        return _process(c, eq=eq, frozen=frozen, order=order, slots=slots)

    return wrap if cls is None else wrap(cls)


def _process(cls: Any, *, eq: bool, frozen: bool, order: bool, slots: bool) -> Any:
    if order and not eq:
        raise ValueError("eq must be true if order is true")
    for base in cls.__mro__[1:]:
        base_frozen = base.__dict__.get("__fluxgraph_frozen__")
        if base_frozen is not None and base_frozen != frozen:
            raise TypeError(
                "cannot inherit frozen dataclass from a non-frozen one"
                if frozen
                else "cannot inherit non-frozen dataclass from a frozen one"
            )
    own = set(cls.__dict__)
    undocumented = not cls.__doc__
    if undocumented:  # dataclasses would describe it with inspect.signature: slow, and before __init__ exists
        cls.__doc__ = "-"
    # fields only: no generated method, no frozen guard (added below, without compiling)
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False, order=False, frozen=False, slots=slots)
    cls.__fluxgraph_frozen__ = frozen
    flds = fields(cls)
    for f in cls.__dataclass_fields__.values():  # fields() leaves InitVar pseudo-fields out
        if isinstance(f.type, dataclasses.InitVar) or (isinstance(f.type, str) and "InitVar" in f.type):
            raise TypeError(f"{cls.__qualname__}.{f.name}: InitVar fields are not supported here")
    for f in flds:
        if f.kw_only:
            raise TypeError(f"{cls.__qualname__}.{f.name}: kw_only fields are not supported here")
    names = frozenset(f.name for f in flds)
    seen_default = False
    for f in flds:
        if f.init:
            if f.default is not MISSING or f.default_factory is not MISSING:
                seen_default = True
            elif seen_default:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
    if "__init__" not in own:
        cls.__init__ = _init(cls, flds, frozen)
    if undocumented:
        cls.__doc__ = f"{cls.__name__}({', '.join(f.name for f in flds if f.init)})"
    if "__repr__" not in own:
        cls.__repr__ = _repr(tuple(f.name for f in flds if f.repr))
    compared = tuple(f.name for f in flds if f.compare)
    key = _key(compared)
    if eq and "__eq__" not in own:
        cls.__eq__ = _eq(key)
    # a class body that defines __eq__ alone gets __hash__ = None from Python: not explicit
    explicit_hash = "__hash__" in own and not (cls.__dict__["__hash__"] is None and "__eq__" in own)
    if eq and not explicit_hash:
        # dataclasses: a frozen class hashes its fields, a mutable one is unhashable
        cls.__hash__ = _hash(_key(tuple(f.name for f in flds if (f.compare if f.hash is None else f.hash)))) if frozen else None
    if order:
        for name, op in (("__lt__", "<"), ("__le__", "<="), ("__gt__", ">"), ("__ge__", ">=")):
            if name in own:
                raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}. Consider using functools.total_ordering")
            setattr(cls, name, _compare(key, name, op))
    if frozen:
        if "__setattr__" in own or "__delattr__" in own:
            raise TypeError(f"Cannot overwrite attribute __setattr__ or __delattr__ in class {cls.__name__}")
        cls.__setattr__, cls.__delattr__ = _frozen(cls, names)
        if slots:  # as dataclasses does: pickling and copying a frozen slotted instance
            cls.__getstate__ = _getstate
            cls.__setstate__ = _setstate
    return cls


def _init(cls: Any, flds: tuple[dataclasses.Field[Any], ...], frozen: bool) -> Any:
    """The one compiled method: as fast as ``dataclasses``' own ``__init__``."""
    params: list[str] = []
    body: list[str] = []
    env: dict[str, Any] = {"__fluxgraph_factory__": _FACTORY, "__fluxgraph_object__": object}
    for f in flds:
        default = f"__fluxgraph_default_{f.name}__"
        has_factory = f.default_factory is not MISSING
        if has_factory:
            env[default] = f.default_factory
        elif f.default is not MISSING:
            env[default] = f.default
        if f.init:
            if has_factory:
                params.append(f"{f.name}={'__fluxgraph_factory__'}")
                value = f"{default}() if {f.name} is __fluxgraph_factory__ else {f.name}"
            elif f.default is not MISSING:
                params.append(f"{f.name}={default}")
                value = f.name
            else:
                params.append(f.name)
                value = f.name
        elif has_factory:
            value = f"{default}()"
        elif f.default is not MISSING:
            value = default
        else:
            continue
        if frozen:
            body.append(f"__fluxgraph_object__.__setattr__(self, {f.name!r}, {value})")
        else:
            body.append(f"self.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    src = f"def __init__(self, {', '.join(params)}):\n    " + ("\n    ".join(body) or "pass") + "\n"
    ns: dict[str, Any] = {}
    exec(src, env, ns)  # generated from the class's own field names, as dataclasses does
    fn = ns["__init__"]
    fn.__qualname__ = f"{cls.__qualname__}.__init__"
    return fn


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of the named attributes, built in C."""
    if not names:
        return lambda _self: ()
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda self: (get(self),)
    return attrgetter(*names)


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
        return f"{self.__class__.__qualname__}({inner})"

    return __repr__


def _eq(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _hash(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(key(self))

    return __hash__


def _compare(key: Callable[[Any], tuple[Any, ...]], name: str, op: str) -> Callable[[Any, Any], Any]:
    test: Callable[[Any, Any], bool] = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}[op]

    def method(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return test(key(self), key(other))
        return NotImplemented

    method.__name__ = method.__qualname__ = name
    return method


def _frozen(cls: Any, names: frozenset[str]) -> tuple[Any, Any]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, f.name) for f in fields(self)]


def _setstate(self: Any, state: list[Any]) -> None:
    for f, value in zip(fields(self), state, strict=False):
        object.__setattr__(self, f.name, value)
