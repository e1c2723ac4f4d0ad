"""NVLink multicast memory on the CPU: an address range whose every byte stands for the same byte of
every rank's copy of a symmetric allocation.

``cutelab.compat.distributed`` maps each rank's copy of an allocation into every rank (host shared
memory); a multicast object is one more mapping of this rank's own copy, at an address of its own,
registered here with the addresses of every rank's copy (rank order). The instructions that
take multicast addresses find the copies here when they run: ``multimem.ld_reduce`` reads and
reduces every copy, ``multimem.st`` and ``multimem.red`` write every copy (``kernel.instr.multimem``),
and a TMA store into a multicast tensor writes every copy (``kernel.instr.tma_store``). Other loads
and stores on a multicast address are undefined in PTX: the interpreter refuses a kernel that makes
them (:func:`check_kernel`).

May import: ``kernel.cpu.interpreter`` (SHARED), ``cutelab.errors``, numpy.
"""

from __future__ import annotations

import ctypes
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ...errors import LaunchError

__all__ = ["GROUPS", "register", "copies", "is_multicast", "check_kernel"]

#: (first, end) of a multicast mapping, the first address of every rank's copy (rank order)
GROUPS: List[Tuple[int, int, List[int]]] = []

_VIEWS: Dict[Tuple[int, int], np.ndarray] = {}


def register(lo: int, hi: int, bases: List[int]) -> None:
    """Addresses lo..hi (this process's multicast mapping) stand for bases[r].. of every rank r."""
    GROUPS.append((int(lo), int(hi), [int(b) for b in bases]))


def _group(addr: int) -> Optional[Tuple[int, int, List[int]]]:
    for g in GROUPS:
        if g[0] <= addr < g[1]:
            return g
    return None


def is_multicast(buf: np.ndarray) -> bool:
    """Whether the array's memory is a multicast mapping."""
    return bool(GROUPS) and _group(buf.__array_interface__["data"][0]) is not None


def _bytes(lo: int, n: int) -> np.ndarray:
    a = _VIEWS.get((lo, n))
    if a is None:
        a = _VIEWS[(lo, n)] = np.frombuffer((ctypes.c_uint8 * n).from_address(lo), dtype=np.uint8)
    return a


def copies(buf: np.ndarray) -> Optional[List[np.ndarray]]:
    """Every rank's copy (rank order) of the memory of buf, a contiguous array in a multicast mapping,
    as arrays of buf's dtype and shape; None when buf is not multicast memory."""
    if not GROUPS:
        return None
    p = buf.__array_interface__["data"][0]
    g = _group(p)
    if g is None:
        return None
    lo, hi, bases = g
    if p + buf.nbytes > hi:
        raise LaunchError(f"an array of {buf.nbytes} bytes at 0x{p:x} runs past the end of its multicast mapping "
                          f"(0x{lo:x}..0x{hi:x})")
    off = p - lo
    return [_bytes(b + off, buf.nbytes).view(buf.dtype).reshape(buf.shape) for b in bases]


#: the instructions that may take a multicast address (their class names); others are undefined
_TAKES_MULTICAST = ("MultimemOp", "TmaStoreOp")


def check_kernel(ir: Any, buffers: Dict[int, np.ndarray]) -> None:
    """Refuse a kernel that loads or stores a multicast tensor argument with an instruction other than
    ``multimem.*`` or a TMA store (PTX leaves such accesses undefined: on the GPU they reach one copy or
    fault), naming the kernel, the instruction and the user's line."""
    if not GROUPS:
        return
    mc = {i for i, buf in buffers.items() if is_multicast(buf)}
    if not mc:
        return
    from ..ir.nodes import Load, Store, walk

    for s in walk(ir.body):
        if isinstance(s, (Load, Store)):
            accs = [(s.param, isinstance(s, Store))]
        elif type(s).__name__ in _TAKES_MULTICAST or not hasattr(s, "accesses"):
            continue
        else:
            accs = [(a.param, a.is_store) for a in s.accesses()]
        for p, is_store in accs:
            if type(p).__name__ != "Param" or p.index not in mc:
                continue
            w = (getattr(s, "where", "") or "").strip() or (f"(at {s.loc})" if getattr(s, "loc", None) else "")
            kind = "store to" if is_store else "load from"
            raise LaunchError(f"kernel {ir.name}{f' {w}' if w else ''}: a {kind} {p.name}, a multicast tensor, by "
                              f"{_what(s)}: a multicast address takes only multimem.ld_reduce/st/red and TMA stores "
                              f"(other accesses are undefined in PTX); load or store through the rank's own "
                              f"(unicast) tensor")


def _what(s: Any) -> str:
    ptx = getattr(s, "ptx", None)
    if callable(ptx):
        try:
            return ptx()
        except Exception:  # noqa: BLE001 - a name is enough
            pass
    return {"Load": "ld.global", "Store": "st.global"}.get(type(s).__name__, type(s).__name__)
