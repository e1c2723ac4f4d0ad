"""Addresses a kernel holds, on the CPU: the memory behind a pointer made from a runtime address.

A kernel may load an address (a peer's buffer pointer from ``symm_mem``'s ``buffer_ptrs``,
passed in an Int64 tensor) and make a pointer of it (``cute.make_ptr``); the memory-ordering
instructions through it (``kernel.instr.atomics``) find here, when they run, which memory the
address is in: one of the kernel's tensor arguments, or memory that other processes map into this
one (``interpreter.SHARED``: symmetric memory of ``cutelab.compat.distributed``). The whole
element must lie inside it and be aligned to its size. Any other address (host memory cutelab did
not give the kernel, a freed buffer, a wrong offset) is a LaunchError naming the instruction and
the address; nothing is read or written there.

May import: ``kernel.cpu.interpreter`` (SHARED), ``cutelab.errors``.
"""

from __future__ import annotations

import ctypes
from typing import Any, Dict, Tuple

import numpy as np

from ...errors import LaunchError

__all__ = ["element_at"]

#: (first, end) of a shared range -> its bytes as a numpy array (the mapping stays for the process)
_RANGES: Dict[Tuple[int, int], np.ndarray] = {}


def _range_bytes(lo: int, hi: int) -> np.ndarray:
    a = _RANGES.get((lo, hi))
    if a is None:
        a = _RANGES[(lo, hi)] = np.frombuffer((ctypes.c_uint8 * (hi - lo)).from_address(lo), dtype=np.uint8)
    return a


def element_at(address: int, dtype: Any, buffers: Dict[int, np.ndarray], addresses: Any,
               what: str) -> Tuple[np.ndarray, int]:
    """(array of dtype's storage, element index) of the element of dtype at address. buffers: the
    launch's arrays by parameter (copies, where the launch writes on copies); addresses: the
    addresses of the parameters' memory as the program knows them."""
    from .interpreter import SHARED

    size = dtype.bytes
    if address % size:
        raise LaunchError(f"{what}: the address 0x{address:x} is not aligned to the element's {size} bytes; "
                          f"nothing was read or written")
    for i, buf in buffers.items():
        starts = {buf.__array_interface__["data"][0], int((addresses or {}).get(i) or 0)}
        lo = next((a for a in starts if a and a <= address and address + size <= a + buf.nbytes), None)
        if lo is not None and buf.flags.c_contiguous:
            off = address - lo
            if off % buf.itemsize == 0 and buf.dtype == np.dtype(dtype.storage):
                return buf.reshape(-1), off // buf.itemsize
            return buf.reshape(-1).view(np.uint8)[off: off + size].view(dtype.storage), 0
    for lo, hi in list(SHARED):
        if lo <= address and address + size <= hi:
            return _range_bytes(lo, hi)[address - lo: address - lo + size].view(dtype.storage), 0
    raise LaunchError(f"{what}: the address 0x{address:x} is in no memory the kernel was given (its tensor "
                      f"arguments) nor in symmetric memory mapped by this process; nothing was read or written")
