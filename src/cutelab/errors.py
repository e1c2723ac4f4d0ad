"""Errors raised by cutelab.

Every user mistake raises one of these, with a message that names the operation, its
operands and the condition that failed. ``user_location`` finds the user's line for them (the
first frame outside cutelab and the standard library); this module imports nothing of cutelab.
"""

import os
import sys
from typing import Dict, Optional


class LayoutError(ValueError):
    """An operation of the layout algebra got input outside its domain."""


class ParseError(LayoutError):
    """A layout or tuple string could not be read."""


class TensorError(LayoutError):
    """A tensor operation got mismatched shapes or out-of-range coordinates."""


class TraceError(RuntimeError):
    """A kernel could not be traced into cutelab's kernel IR."""


class CompileError(RuntimeError):
    """Generated CUDA C++ failed to compile."""


class LaunchError(ValueError):
    """A kernel launch was asked for with bad arguments (shapes, alignment, grid)."""


class CudaRuntimeError(LaunchError):
    """A CUDA call or launch failed with a CUDA error code (CuTe DSL's ``DSLCudaRuntimeError``): the
    emulated device raises it where the GPU's runtime would return the error, e.g. a cooperative launch
    whose grid cannot be resident at once (``cudaErrorCooperativeLaunchTooLarge``). ``error_code`` is the
    runtime's number (``cuda.bindings.runtime.cudaError_t``), ``error_name`` its name."""

    def __init__(self, error_code: int, error_name: str, runtime_detail: Optional[str] = None,
                 suggestion: Optional[str] = None) -> None:
        self._error_code, self._error_name = error_code, error_name
        msg = f"{error_name} (CUDA error {int(error_code)})"
        if runtime_detail:
            msg += f": {runtime_detail}"
        if suggestion:
            msg += f"; {suggestion}"
        super().__init__(msg)

    @property
    def error_code(self) -> int:
        return self._error_code

    @property
    def error_name(self) -> str:
        return self._error_name


class NotInCutelab(TraceError, NotImplementedError):
    """A CuTe DSL 4.8.1 name that cutelab does not provide yet was used (see :func:`not_yet`): a
    TraceError, as a kernel being traced raises; a NotImplementedError, as the compatibility
    layer's refusals are."""


class _NotYetMeta(type):
    """Metaclass of :func:`not_yet` stand-ins: any public attribute of the class raises when called."""

    def __getattr__(cls, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)

        def refused(*args, **kwargs):
            _raise_not_yet(f"{cls._dsl_name}.{attr}", cls._why)

        return refused


_PKG_DIR = os.path.dirname(os.path.abspath(__file__))  # .../cutelab
_STDLIB = os.path.dirname(os.path.abspath(os.__file__))
_internal_cache: Dict[str, bool] = {}


def _internal(filename: str) -> bool:
    """True for frames of cutelab itself and of Python's standard library (not the user's code)."""
    r = _internal_cache.get(filename)
    if r is None:
        f = os.path.abspath(filename)
        r = (f.startswith(_PKG_DIR + os.sep) or (f.startswith(_STDLIB + os.sep) and "site-packages" not in f)
             or filename.startswith("<frozen"))
        _internal_cache[filename] = r
    return r


def user_location() -> Optional[str]:
    """"file.py:12" of the innermost frame of the caller's stack outside cutelab and the standard
    library: the line of the user's code (a kernel being traced, a DSL name used); None if there is none."""
    f = sys._getframe(1)
    while f is not None:
        if not _internal(f.f_code.co_filename):
            return f"{f.f_code.co_filename}:{f.f_lineno}"
        f = f.f_back
    return None


def _raise_not_yet(name: str, why: str = "") -> None:
    raise NotInCutelab(f"{name} (CuTe DSL 4.8.1) is not in cutelab yet (used at {user_location() or 'an unknown line'})"
                       + (f": {why}" if why else ""))


def not_yet(dsl_name: str, why: str = "") -> type:
    """A stand-in class for a CuTe DSL 4.8.1 name cutelab does not provide yet: it imports (libraries
    name such classes in module-level tuples, annotations and subclass lists) and may be subclassed
    (CUTLASS's grouped GEMM subclasses cutlass.utils.TensorMapManager); making an object of it or
    of a subclass, calling one of its members or calling it as a function raises NotInCutelab
    naming it and the user's line (and ``why``, when given: what is missing).

    >>> Op = not_yet("cute.nvgpu.tcgen05.LdRed32x32bOp")
    >>> isinstance(Op, type), Op.__name__
    (True, 'LdRed32x32bOp')
    >>> Op()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cutelab.errors.NotInCutelab: cute.nvgpu.tcgen05.LdRed32x32bOp (CuTe DSL 4.8.1) is not in cutelab yet (used at ...)
    >>> class Mine(Op): pass
    >>> try:
    ...     Mine()
    ... except TraceError as e:
    ...     print(isinstance(e, NotImplementedError), str(e).split(" (used")[0])
    True cute.nvgpu.tcgen05.LdRed32x32bOp (CuTe DSL 4.8.1) is not in cutelab yet
    """

    def __new__(cls, *args, **kwargs):
        _raise_not_yet(dsl_name, why)

    name = dsl_name.rsplit(".", 1)[-1]
    return _NotYetMeta(name, (), {"__new__": __new__, "_dsl_name": dsl_name, "_why": why, "__qualname__": dsl_name,
                                  "__doc__": f"{dsl_name}: not in cutelab yet (using it raises NotInCutelab)"})
