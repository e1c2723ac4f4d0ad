"""``Namespace``: a module that stands for a CuTe DSL module under the hook (cutlass.cute, cute.arch,
cutlass.experimental, ...), answering from its extras, then from cutelab's modules of that role.
Below namespaces.py (which makes the DSL's namespaces) and experimental/ (which makes its own).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import types
from typing import Any, Callable, Dict, Sequence

from .where import user_line


def _loc_tolerant(fn: Any) -> Any:
    """fn, or for a cutelab function without them, fn taking (and ignoring) the ``loc=``/``ip=`` keywords that
    CuTe DSL's functions take (MLIR's source location and insertion point; libraries pass them through)."""
    if not isinstance(fn, types.FunctionType):
        return fn
    try:
        ps = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    if "loc" in ps or any(p.kind is p.VAR_KEYWORD for p in ps.values()):
        return fn

    @functools.wraps(fn)
    def call(*args: Any, loc: Any = None, ip: Any = None, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return call


class Namespace(types.ModuleType):
    """A module named ``dsl_name`` that answers from ``extras``, then from ``bases`` in order, then
    by importing the submodule ``dsl_name.<attr>`` through the hook."""

    def __init__(self, dsl_name: str, bases: Sequence[str], extras: Callable[[], Dict[str, Any]] = dict,
                 doc: str = ""):
        super().__init__(dsl_name, doc or f"{dsl_name}, as cutelab's compatibility layer provides it")
        self.__dict__["_bases_names"] = tuple(bases)
        self.__dict__["_extras_fn"] = extras
        self.__dict__["_loaded"] = False
        self.__dict__["__path__"] = []  # a package: cutlass.cute.X imports go through the hook
        self.__dict__["__package__"] = dsl_name

    def _bases(self):
        return [importlib.import_module(b) for b in self.__dict__["_bases_names"]]

    def _load_extras(self) -> None:
        if not self.__dict__["_loaded"]:
            self.__dict__["_loaded"] = True
            for k, v in self.__dict__["_extras_fn"]().items():
                self.__dict__.setdefault(k, v)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        self._load_extras()
        if name in self.__dict__:
            return self.__dict__[name]
        for b in self._bases():
            try:
                v = getattr(b, name)
            except AttributeError:
                continue
            w = _loc_tolerant(v)
            if w is not v or name in vars(b):  # the same wrapper each time (cute.make_layout is
                self.__dict__[name] = w  # cute.make_layout); a plain attribute of the base is looked up once
            return w  # (cutlass.Int32 in a launch loop); a base's own __getattr__ answers afresh every time
        try:
            return importlib.import_module(f"{self.__name__}.{name}")
        except ModuleNotFoundError:
            pass
        where = user_line(2)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r} in cutelab"
                             + (f" (used at {where})" if where else ""))

    def __dir__(self):
        self._load_extras()
        names = set(self.__dict__)
        for b in self._bases():
            names |= set(dir(b))
        return sorted(n for n in names if not n.startswith("_") or n.startswith("__"))

    def __repr__(self) -> str:
        return f"<module {self.__name__!r} (cutelab)>"
