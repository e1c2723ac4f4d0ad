"""The CUDA of ``tcgen05.ld`` / ``tcgen05.st`` for every shape: 32x32b, 16x64b, 16x128b, 16x256b and 16x32bx2,
on 32-, 16- and 8-bit elements, with ``.pack::16b`` / ``.unpack::16b``.

PTX fixes where each register of each thread goes (the ISA's "matrix fragments" of tcgen05.ld/st): for one
repetition-group of shape S (``.xN``), thread t's register r holds the 32-bit cell at (lane, column) of
``fragment(S, N)``, relative to the instruction's address (lane << 16 | column):

- 32x32b:   lane t,                        column r                           (N registers)
- 16x64b:   lane t/4 + 8 (t%2),            column (t/2)%2 + 2r                (N registers)
- 16x128b:  lane t/4 + 8 (r%2),            column t%4 + 4 (r/2)               (2N registers)
- 16x256b:  lane t/4 + 8 ((r/2)%2),        column r%2 + 2 (t%4) + 8 (r/4)     (4N registers)
- 16x32bx2: lane t%16,                     column r + N (t/16)                (N registers; the second half
  of the warp at the immediate column offset N)

A register of 16-bit elements holds two of them, the lower-addressed in the low half; one of 8-bit elements
four. With ``.pack::16b`` (loads) / ``.unpack::16b`` (stores) a register's two 16-bit halves are the low halves
of two adjacent 32-bit cells (columns 2c and 2c+1 for the fragment's column c): a packed copy touches twice the
columns.

``print_tmem_copy`` matches a TmemCopyOp's own table (thread t's value v at TMEM element ``base + offs[t, v]``,
from CuTe's TV layouts) against these fragments: it cuts the values into instructions (blocks of lanes x
columns), and in each instruction every thread's register (and half) must hold the same value index, as one
line of C does for every thread; anything else is refused, never printed otherwise.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

from ...errors import TraceError

__all__ = ["SHAPES", "fragment", "print_tmem_copy"]

#: shape -> (lanes, fragment columns per repetition, registers per repetition)
SHAPES: Dict[str, Tuple[int, int, int]] = {"32x32b": (32, 1, 1), "16x64b": (16, 2, 1), "16x128b": (16, 4, 2),
                                            "16x256b": (16, 8, 4), "16x32bx2": (16, 2, 1)}


def fragment(shape: str, n: int) -> Tuple[np.ndarray, np.ndarray]:
    """(lane, column) arrays of shape (32 threads, registers) of ``tcgen05.ld/st.<shape>.x<n>``: the 32-bit
    cell, relative to the instruction's address, that thread t's register r moves (unpacked).

    >>> lane, col = fragment("16x256b", 1)
    >>> [(int(lane[5, r]), int(col[5, r])) for r in range(4)]
    [(1, 2), (1, 3), (9, 2), (9, 3)]
    """
    if shape not in SHAPES:
        raise ValueError(f"fragment({shape!r}): not a tcgen05.ld/st shape ({', '.join(SHAPES)})")
    t = np.arange(32, dtype=np.int64)[:, None]
    r = np.arange(n * SHAPES[shape][2], dtype=np.int64)[None, :]
    if shape == "32x32b":
        lane, col = t + 0 * r, r + 0 * t
    elif shape == "16x64b":
        lane, col = t // 4 + 8 * (t % 2) + 0 * r, (t // 2) % 2 + 2 * r
    elif shape == "16x128b":
        lane, col = t // 4 + 8 * (r % 2), t % 4 + 4 * (r // 2)
    elif shape == "16x256b":
        lane, col = t // 4 + 8 * ((r // 2) % 2), r % 2 + 2 * (t % 4) + 8 * (r // 4)
    else:  # 16x32bx2
        lane, col = t % 16 + 0 * r, r + n * (t // 16)
    return lane, col


def _slots(op: Any, shape: str, n: int, packed: bool, epc: int, dp: int, where: str) -> Tuple[dict, int, int]:
    """Per instruction (lane block, column block): an array (32, registers, halves) of value indices, and the
    first lane and 32-bit column (relative to the op's base) of the values."""
    L, wcols, _ = SHAPES[shape]
    W = wcols * n  # fragment columns per instruction
    flane, fcol = fragment(shape, n)
    inv = {}
    for t in range(32):
        for j in range(flane.shape[1]):
            inv[(int(flane[t, j]), int(fcol[t, j]))] = (t, j)
    offs = np.asarray(op.tmem_offs, dtype=np.int64)
    lane_abs, e = offs // dp, offs % dp
    col, q = e // epc, e % epc
    halves = epc
    if packed:
        if epc != 2:
            raise TraceError(f"{where}: .pack::16b/.unpack::16b moves 16-bit elements, not {op.dtype}")
        if (q != 0).any():
            raise TraceError(f"{where}: a packed copy moves the low 16 bits of each 32-bit cell; a value lies in a "
                             f"high half; not printed")
    col0 = int(col.min())
    fc, s = ((col - col0) // 2, (col - col0) % 2) if packed else (col - col0, q)  # pairs from the first column
    lane0 = int(lane_abs.min())
    slots: dict = {}
    for t in range(32):
        for v in range(offs.shape[1]):
            ln, c = int(lane_abs[t, v]) - lane0, int(fc[t, v])
            blk = (ln // L, c // W)
            got = inv.get((ln % L, c % W))
            if got is None or got[0] != t:
                raise TraceError(f"{where}: thread {t}'s value {v} lies at TMEM lane +{ln % L}, column +{c % W} of "
                                 f"its {shape}.x{n} instruction, not where PTX's fragment puts one of its registers; "
                                 f"not printed")
            slot = slots.setdefault(blk, np.full((32, flane.shape[1], halves), -1, dtype=np.int64))
            if slot[t, got[1], int(s[t, v])] >= 0:
                raise TraceError(f"{where}: thread {t} moves two values to one TMEM element; not printed")
            slot[t, got[1], int(s[t, v])] = v
    return slots, lane0, col0


def print_tmem_copy(op: Any, r: Any, where: str) -> None:
    """Print a TmemCopyOp (see the module's docstring), then ``tcgen05.wait::ld/st``."""
    from ...nvgpu.tcgen05.tmem import _elems_per_column, tmem_dp_stride
    from ..ir.symbolic import is_sym

    shape, n = op.ptx[0], op.ptx[1]
    packed = len(op.ptx) > 2 and bool(op.ptx[2])
    d = "ld" if op.load else "st"
    w = op.dtype.width
    if w not in (8, 16, 32):
        raise TraceError(f"{where}: tcgen05.{d} of {op.dtype} elements is not printed")
    if op.own_lane:
        raise TraceError(f"{where}: tcgen05.{d} {shape} through a TMEM tensor of one lane per thread is not printed")
    epc = _elems_per_column(op.dtype)
    dp = tmem_dp_stride(op.dtype)
    slots, lane0, col0 = _slots(op, shape, n, packed, epc, dp, where)
    L, wcols, _ = SHAPES[shape]
    cells_per_fc = 2 if packed else 1  # 32-bit columns of one fragment column
    nreg = n * SHAPES[shape][2]
    qual = (".pack::16b" if op.load else ".unpack::16b") if packed else ""
    split = f", {n * cells_per_fc}" if shape == "16x32bx2" else ""  # the second half's column offset (immediate)
    halves = epc
    mask = (1 << w) - 1
    if op.load:
        r.declare(op.reg)
        reg = r.reg(op.reg)
        if op.reg.dtype.width != w or (w != 32 and op.reg.dtype.name != op.dtype.name):
            raise TraceError(f"{where}: tcgen05.ld of {op.dtype} into registers of {op.reg.dtype} is not printed")
    for blk, slot in sorted(slots.items()):
        if (slot < 0).any() or not (slot == slot[0]).all():
            raise TraceError(f"{where}: the threads' values do not fill the registers of a {shape}.x{n}"
                             f"{qual} instruction alike (one line of C moves the same register of every thread); "
                             f"not printed")
        lane = lane0 + blk[0] * L
        cell = col0 + blk[1] * wcols * n * cells_per_fc
        o = lane * dp + cell * epc
        a0 = op.base + o if is_sym(op.base) else int(op.base) + o
        if is_sym(a0):
            addr = r.expr(a0)[0] if epc == 1 else f"(({r.expr(a0)[0]}) / {epc})"
        else:
            addr = str(int(a0) // epc)
        ops = ", ".join(f"%{i}" for i in range(nreg))
        vals = slot[0]  # (registers, halves) -> value index
        if op.load:
            if w == 32:
                outs = ", ".join(f'"=r"(*(unsigned*)&{reg}[{int(op.reg_offs[vals[j, 0]])}])' for j in range(nreg))
                r.emit(f'asm volatile("tcgen05.ld.sync.aligned.{shape}.x{n}{qual}.b32 {{{ops}}}, [%{nreg}]{split};" '
                       f': {outs} : "r"((unsigned)({addr})) : "memory");')
                continue
            tmp = r.fresh("cl_tm")
            outs = ", ".join(f'"=r"({tmp}[{j}])' for j in range(nreg))
            with r.braces():
                r.emit(f"unsigned {tmp}[{nreg}];")
                r.emit(f'asm volatile("tcgen05.ld.sync.aligned.{shape}.x{n}{qual}.b32 {{{ops}}}, [%{nreg}]{split};" '
                       f': {outs} : "r"((unsigned)({addr})) : "memory");')
                ct = "unsigned short" if w == 16 else "unsigned char"
                for j in range(nreg):
                    for h in range(halves):
                        dst = f"*({ct}*)&{reg}[{int(op.reg_offs[vals[j, h]])}]"
                        r.emit(f"{dst} = ({ct})(({tmp}[{j}] >> {w * h}) & 0x{mask:x}u);")
        else:
            def bits(v: int) -> str:
                x = r.stored(op.src[v], op.dtype)
                if w == 32:
                    return f"__float_as_uint({x})" if op.dtype.kind == "float" else f"(unsigned)({x})"
                return f"((unsigned)({x}) & 0x{mask:x}u)"

            words = []
            for j in range(nreg):
                parts = [bits(int(vals[j, h])) if h == 0 else f"({bits(int(vals[j, h]))} << {w * h})"
                         for h in range(halves)]
                words.append(parts[0] if len(parts) == 1 else "(" + " | ".join(parts) + ")")
            ins = ", ".join(f'"r"({x})' for x in words)
            r.emit(f'asm volatile("tcgen05.st.sync.aligned.{shape}.x{n}{qual}.b32 [%{nreg}]{split}, {{{ops}}};" :: '
                   f'{ins}, "r"((unsigned)({addr})) : "memory");')
    r.emit(f'asm volatile("tcgen05.wait::{d}.sync.aligned;" ::: "memory");')
