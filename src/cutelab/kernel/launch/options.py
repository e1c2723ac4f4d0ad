"""CuTe DSL's compile options (``cute.compile[cute.KeepPTX, cute.OptLevel(2)](fn, ...)``).

cutelab accepts the options CuTe DSL 4.8.1 exports from ``cutlass.cute`` so that programs written
for it compile unchanged; they do not change what cutelab builds. cutelab prints CUDA C++ and
compiles it with NVRTC (``cutelab.kernel.cuda.printer.render`` gives the source), so the file-dump options
(KeepPTX, KeepCUBIN, KeepSASS) write no file, and the ptxas/nvdisasm/arch strings are not passed on.
A value CuTe DSL refuses is refused here too (``OptLevel(7)``).

>>> import cutelab as cute
>>> cute.OptLevel(2).value, cute.KeepPTX().value, cute.PtxasOptions("-v").value
(2, True, '-v')
>>> cute.OptLevel(4)
Traceback (most recent call last):
...
ValueError: OptLevel(4): the optimisation level must be 0, 1, 2 or 3
"""

from __future__ import annotations

from typing import Any

from .api import GenerateLineInfo

__all__ = ["OptLevel", "PtxasOptions", "EnableAssertions", "GenerateLineInfo", "KeepCUBIN", "KeepPTX",
           "KeepSASS", "NvdisasmOptions", "GPUArch"]


class _Option:
    """One compile option: a value, printed as ``Name(value)``."""

    _default: Any = None

    def __init__(self, val: Any = None) -> None:
        self.value = self._default if val is None else self._check(val)

    def _check(self, val: Any) -> Any:
        return val

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.value!r})"


class _Flag(_Option):
    _default = True

    def _check(self, val: Any) -> bool:
        return bool(val)


class _Text(_Option):
    _default = ""

    def _check(self, val: Any) -> str:
        if not isinstance(val, str):
            raise TypeError(f"{type(self).__name__}({val!r}): the option takes a string, got {type(val).__name__}")
        return val


class OptLevel(_Option):
    """The optimisation level, 0 to 3 (CuTe DSL's default is 3)."""

    _default = 3

    def _check(self, val: Any) -> int:
        if isinstance(val, bool) or not isinstance(val, int) or not 0 <= val <= 3:
            raise ValueError(f"OptLevel({val!r}): the optimisation level must be 0, 1, 2 or 3")
        return val


class EnableAssertions(_Flag):
    """Keep device-side assertions (accepted; cutelab's checks do not depend on it)."""


class KeepCUBIN(_Flag):
    """Dump the cubin (accepted; cutelab writes no file: it compiles CUDA C++ with NVRTC, cached on disk)."""


class KeepPTX(_Flag):
    """Dump the PTX (accepted; cutelab writes no file: ``cutelab.kernel.cuda.printer.render(ir)`` gives its CUDA source)."""


class KeepSASS(_Flag):
    """Dump the SASS (accepted; cutelab writes no file)."""


class PtxasOptions(_Text):
    """Options for ptxas (accepted, not passed on: NVRTC compiles cutelab's kernels)."""


class NvdisasmOptions(_Text):
    """Options for nvdisasm (accepted, not used)."""

    _default = "-g -c"


class GPUArch(_Text):
    """The target architecture, e.g. ``"sm_90a"`` (accepted; cutelab compiles for the GPU it runs on)."""
