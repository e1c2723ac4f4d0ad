"""The modules that ``cutlass``, ``cutlass.cute``, ``cute.arch``, ``cute.math``, ... stand for
under the hook: each is a view of cutelab's module of that role, plus the DSL names cutelab's own
API does not carry (``extras``), from the façades of this package.

A name found nowhere is an AttributeError naming the DSL path (``cutlass.cute.foo``) and the
user's line; a name known to be missing (``MISSING``) raises NotEmulatedError when used.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import types
from typing import Any, Callable, Dict, Sequence

from .where import NotEmulatedError, user_line


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
            w = _with_loc_ip(v)
            if w is not v:
                self.__dict__[name] = w
            return w
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


def _with_loc_ip(fn: Any) -> Any:
    """fn, taking CuTe DSL's ``loc=``/``ip=`` keywords (MLIR source locations and insertion points, which
    every DSL operation accepts and libraries' ``@dsl_user_op`` helpers pass on): a cutelab function without
    them is wrapped to drop them; anything else is returned as it is."""
    if not isinstance(fn, types.FunctionType):
        return fn
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    if "loc" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return fn

    @functools.wraps(fn)
    def dsl_op(*args: Any, loc: Any = None, ip: Any = None, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return dsl_op


def _dsl_extras() -> Dict[str, Any]:
    from . import cutlass_dsl, dsl_names

    return {**dsl_names.CUTLASS_EXTRAS, "extract_mlir_values": cutlass_dsl.extract_mlir_values,
            "new_from_mlir_values": cutlass_dsl.new_from_mlir_values}


def _cute_extras() -> Dict[str, Any]:
    from . import dsl_names

    return dsl_names.CUTE_EXTRAS


def _arch_extras() -> Dict[str, Any]:
    from . import dsl_names

    return dsl_names.ARCH_EXTRAS


def _math_extras() -> Dict[str, Any]:
    from . import dsl_names

    return dsl_names.MATH_EXTRAS


def _runtime_extras() -> Dict[str, Any]:
    from . import tvm_ffi

    return tvm_ffi.RUNTIME_EXTRAS


def _testing_extras() -> Dict[str, Any]:
    from . import dsl_testing

    return dsl_testing.EXTRAS


def _torch_extras() -> Dict[str, Any]:
    from . import dsl_torch

    return dsl_torch.EXTRAS


def _utils_extras() -> Dict[str, Any]:
    from . import dsl_utils

    return dsl_utils.EXTRAS


cutlass = Namespace("cutlass", ["cutelab"], _dsl_extras, "cutlass (nvidia-cutlass-dsl), as cutelab")
cute = Namespace("cutlass.cute", ["cutelab"], _cute_extras, "cutlass.cute, as cutelab")
arch = Namespace("cutlass.cute.arch", ["cutelab.kernel.frontend.arch"], _arch_extras)
math = Namespace("cutlass.cute.math", ["cutelab.kernel.instr.mathops"], _math_extras)
runtime = Namespace("cutlass.cute.runtime", ["cutelab.runtime"], _runtime_extras)
testing = Namespace("cutlass.cute.testing", ["cutelab.testing"], _testing_extras)
torch = Namespace("cutlass.torch", ["cutelab.torch"], _torch_extras)
utils = Namespace("cutlass.utils", ["cutelab.utils"], _utils_extras)

cutlass.__dict__["cute"] = cute
for _n, _m in (("arch", arch), ("math", math), ("runtime", runtime), ("testing", testing)):
    cute.__dict__[_n] = _m
cutlass.__dict__["torch"] = torch
cutlass.__dict__["utils"] = utils


def refuse_missing(names: Dict[str, str]) -> Dict[str, Any]:
    """{name: why} -> {name: a function raising NotEmulatedError(name, why) when called}."""
    from .where import refuse

    return {n: refuse(n, why) for n, why in names.items()}


__all__ = ["Namespace", "cutlass", "cute", "arch", "math", "runtime", "testing", "torch", "utils",
           "NotEmulatedError", "user_line"]
