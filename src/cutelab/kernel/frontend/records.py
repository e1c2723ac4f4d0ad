"""Arguments made of records: lists, tuples, NamedTuples and dataclass instances, taken apart and
rebuilt with some of their parts replaced.

A jit function's argument may hold its tensors, pointers and scalars inside such records (quack's
epilogue arguments are NamedTuples, its tile-scheduler options dataclasses). Binding a call's values,
stand-in memory or a compiled function's fakes into them is the same walk each time: take the record's
parts, replace some, and rebuild a record of the same kind. This module is that walk's two halves.
An array (anything with a ``shape``) is a leaf, never a record, even when it is a sequence.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Tuple


def is_namedtuple(x: Any) -> bool:
    """Whether x is a NamedTuple instance.

    >>> import collections
    >>> is_namedtuple(collections.namedtuple("P", "a b")(1, 2)), is_namedtuple((1, 2))
    (True, False)
    """
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def is_dataclass_value(x: Any) -> bool:
    """Whether x is a dataclass instance (not a dataclass type)."""
    return dataclasses.is_dataclass(x) and not isinstance(x, type)


def parts(x: Any) -> Optional[List[Tuple[Any, Any]]]:
    """The parts of a record as (key, value) pairs: a list's or tuple's items by index (a NamedTuple's
    too), a dataclass instance's init fields by name; None for anything else (a leaf).

    >>> parts([4, 5]), parts("ab"), parts(3)
    ([(0, 4), (1, 5)], None, None)
    """
    if isinstance(x, (list, tuple)) and not hasattr(x, "shape"):
        return list(enumerate(x))
    if is_dataclass_value(x):
        return [(f.name, getattr(x, f.name)) for f in dataclasses.fields(x) if f.init]
    return None


def same_kind(a: Any, b: Any) -> bool:
    """Whether records a and b can be walked side by side: dataclasses of one type, or sequences of the
    same length (a list beside a tuple included: a call may pass either where the compile had one)."""
    if is_dataclass_value(a):
        return type(a) is type(b)
    return (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)
            and not hasattr(a, "shape") and not hasattr(b, "shape"))


def rebuilt(x: Any, values: List[Any]) -> Any:
    """The record x with its parts (``parts(x)``' order) replaced by values: x itself when every value is
    the part it replaces; a list, tuple or NamedTuple as x is; a dataclass by ``dataclasses.replace``.

    >>> import collections
    >>> P = collections.namedtuple("P", "a b")
    >>> rebuilt(P(1, 2), [1, 3]), rebuilt((1, 2), [5, 2]), rebuilt([1], [7])
    (P(a=1, b=3), (5, 2), [7])
    >>> p = P(1, 2); rebuilt(p, [1, 2]) is p
    True
    """
    old = parts(x)
    if old is None:
        raise TypeError(f"rebuilt: {type(x).__name__} is not a list, tuple or dataclass instance")
    if len(values) != len(old):
        raise ValueError(f"rebuilt: {type(x).__name__} has {len(old)} parts, {len(values)} values given")
    if all(v is o for v, (_, o) in zip(values, old)):
        return x
    if isinstance(x, list):
        return list(values)
    if isinstance(x, tuple):
        return type(x)(*values) if is_namedtuple(x) else type(x)(values)
    return dataclasses.replace(x, **{k: v for (k, _), v in zip(old, values)})


def with_fields(x: Any, changes: Dict[str, Any]) -> Any:
    """x (a dataclass instance or NamedTuple) with the fields named in changes replaced; x itself when
    none is.

    >>> import collections
    >>> P = collections.namedtuple("P", "a b")
    >>> with_fields(P(1, 2), {"b": 9})
    P(a=1, b=9)
    """
    if not changes:
        return x
    return x._replace(**changes) if is_namedtuple(x) else dataclasses.replace(x, **changes)
