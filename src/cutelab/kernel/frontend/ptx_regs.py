"""Registers that inline PTX declares at function scope, shared by the kernel's later asm statements.

flash_attn.cute's SM100 kernels declare registers outside any ``{ }`` in one ``llvm.inline_asm``
(``declare_ptx_smem_desc``: the descriptors of Q's k-blocks) and read and move them in later ones
(``gemm_ptx_precomputed_varname`` moves them by a Q stage, back and forth within each iteration of its
MMA loop). The instructions that lower such programs while they are traced (kernel/instr/ptx_umma.py)
keep their values here, per kernel trace, as trace-time values (numbers, shared-address descriptor
words). A runtime loop or branch is traced once, so such a value may change inside one only if it is
back to its value from before the region at the end of each iteration and of each arm (the same in
every thread and every iteration); anything else is refused by name (``Regions``).
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np

from ...errors import TraceError

__all__ = ["table", "same", "Regions"]


def table(t: Any) -> Dict[str, list]:
    """The trace's function-scope registers: name -> [value or None]."""
    return t.__dict__.setdefault("ptx_function_regs", {})


def same(a: Any, b: Any) -> bool:
    """Whether two trace-time register values are the same value."""
    from ...address import AddressUnits

    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, AddressUnits) and isinstance(b, AddressUnits):
        return a.shift == b.shift and a.bits == b.bits and a.addr._same(b.addr)
    if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
        return int(a) == int(b)
    return a is b


class Regions:
    """The function-scope registers' values as a runtime region starts; ``check`` at the end of each
    iteration or arm."""

    def __init__(self, t: Any, what: str, where: str):
        self.t, self.what, self.where = t, what, where
        self.before = {n: cell[0] for n, cell in table(t).items()}

    def check(self) -> None:
        for n, cell in table(self.t).items():
            if n in self.before and not same(cell[0], self.before[n]):
                raise TraceError(
                    f"kernel {self.t.name}: the inline-PTX register {n!r}, declared at function scope, has another "
                    f"value at the end of the runtime {self.what} at {self.where} than at its start; cutelab lowers "
                    f"such PTX while tracing, so the register may change inside a runtime loop or branch only if "
                    f"it is back to its value by the end of each iteration and arm")
            if n not in self.before and cell[0] is not None:
                self.before[n] = cell[0]  # declared inside the region: its own from here on
