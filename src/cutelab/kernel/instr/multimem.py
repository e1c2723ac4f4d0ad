"""NVLink multicast instructions on a multicast address (a tensor from ``nvshmem.core.get_multicast_tensor``
or ``cutlass.torch.as_tensor`` of a symmetric-memory handle's ``multicast_ptr``), as
``cutlass.utils.distributed`` issues them:

- ``multimem.ld_reduce[.sem.scope].global.add[.acc::f32|f16][.v2|.v4].T``: every rank's copy of 4, 8
  or 16 bytes, summed (T: f32, f16x2, bf16x2, e4m3x4, e5m2x4; 16-bit types are added in f32, 8-bit
  ones in f16, then rounded to T), returned as 32-bit words;
- ``multimem.st[.sem.scope].global[.v2|.v4].f32``: 32-bit words written to every rank's copy;
- ``multimem.red[.sem.scope].global.add.T``: an atomic add to every rank's copy (the flags of the
  cross-rank barriers, ``multimem_red_add1``).

CPU: the copies are found when the instruction runs (``kernel.cpu.multicast``); an address that is not
multicast memory, or one not aligned to the access, is a LaunchError naming the instruction and the
user's line. Every copy is read or written at once, thread by thread in thread order for ``red``
(under the ranks' lock, as atomics on symmetric memory are); memory is coherent and in program order,
so the ``.release``/``.acquire`` orders hold. CUDA: the PTX instruction (sm_90 and later).

May import: ``kernel.ir``, ``kernel.frontend``, ``kernel.cpu.multicast``, ``kernel.instr.atomics``.
"""

from __future__ import annotations

import contextlib
from typing import Any, List, Tuple

import numpy as np

from ... import dtypes
from ...errors import LaunchError, TraceError
from ..frontend.trace import TraceValue, _refs_of, current
from ..ir.nodes import Access, Op
from . import atomics as _at

__all__ = ["MultimemOp", "ld_reduce", "st", "red", "LD_REDUCE_TYPES"]

#: PTX type of ld_reduce -> (element type name, elements per 32-bit word, accumulation type or None)
LD_REDUCE_TYPES = {"f32": ("f32", 1, None), "f16x2": ("f16", 2, "f32"), "bf16x2": ("bf16", 2, "f32"),
                   "e4m3x4": ("f8E4M3FN", 4, "f16"), "e5m2x4": ("f8E5M2", 4, "f16")}
_SEMS = {"ld_reduce": (None, "relaxed", "acquire"), "st": (None, "relaxed", "release"),
         "red": (None, "relaxed", "release")}


def _numeric(name: str) -> Any:
    from ... import numeric

    return {"f32": numeric.Float32, "f16": numeric.Float16, "bf16": numeric.BFloat16,
            "f8E4M3FN": numeric.Float8E4M3FN, "f8E5M2": numeric.Float8E5M2}[name]


class MultimemOp(Op):
    """One thread's multimem instruction on ``param`` (a multicast tensor argument) at element ``base``.

    kind "ld_reduce": ``dst`` (Int32, ``words``) = the sum over the ranks of ``words`` 32-bit words of
    ``ptype`` data; "st": ``words`` 32-bit values ``vals`` (refs, with their types) stored to every rank;
    "red": every rank's element += ``vals[0]`` (the pointer's element type)."""

    __slots__ = ("kind", "param", "base", "ptype", "words", "sem", "scope", "vals", "dst", "where")

    def __init__(self, kind: str, param: Any, base: Any, ptype: str, words: int, sem: Any, scope: Any,
                 vals: Any = (), dst: Any = None, where: str = ""):
        self.kind, self.param, self.base, self.ptype, self.words = kind, param, base, ptype, words
        self.sem, self.scope, self.vals, self.dst, self.where = sem, scope, tuple(vals), dst, where

    def ptx(self) -> str:
        """The PTX opcode, e.g. ``multimem.ld_reduce.relaxed.sys.global.add.acc::f32.v4.f16x2``."""
        parts = ["multimem", self.kind]
        if self.sem is not None:
            parts += [self.sem, self.scope or "gpu"]
        elif self.kind in ("ld_reduce", "st"):
            parts.append("weak")
        elif self.scope is not None:
            parts.append(self.scope)
        parts.append("global")
        if self.kind in ("ld_reduce", "red"):
            parts.append("add")
        if self.kind == "ld_reduce" and LD_REDUCE_TYPES[self.ptype][2] is not None:
            parts.append(f"acc::{LD_REDUCE_TYPES[self.ptype][2]}")
        if self.words > 1:
            parts.append(f"v{self.words}")
        parts.append(self.ptype)
        return ".".join(parts)

    def __repr__(self) -> str:
        d = f"{self.dst.name} = " if self.dst is not None else ""
        return f"{d}{self.ptx()} {self.param.name}[{self.base}]"

    def _nbytes(self) -> int:
        return 4 * self.words if self.kind != "red" else self.param.dtype.bytes

    def accesses(self) -> List[Access]:
        n = max(1, self._nbytes() // self.param.dtype.bytes)  # this rank's copy, as the bounds checks see it
        offs = tuple(range(n))
        if self.kind == "ld_reduce":
            return [Access(self.param, self.base, offs, False, self)]
        if self.kind == "st":
            return [Access(self.param, self.base, offs, True, self)]
        return [Access(self.param, self.base, offs, False, self), Access(self.param, self.base, offs, True, self)]

    # ---- CPU
    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        from ..cpu import multicast

        buf, length, _ = b.memory(self.param, buffers)
        act = np.nonzero(np.ones(b.n, dtype=bool) if mask is None else mask)[0]
        if not act.size:
            return
        copies = multicast.copies(buf)
        if copies is None:
            raise LaunchError(f"{b.ir.name}{self.where}: {self.ptx()} on {self.param.name}, which is not multicast "
                              f"memory: multimem instructions take a multicast address (a tensor from nvshmem.core."
                              f"get_multicast_tensor, or cutlass.torch.as_tensor of a symmetric-memory handle's "
                              f"multicast_ptr)")
        esize = self.param.dtype.bytes
        nbytes = self._nbytes()
        idx = np.broadcast_to(np.asarray(b.index(self.base), dtype=np.int64), (b.n,))[act]
        byte = idx * esize
        bad = (byte % nbytes != 0) | (idx < 0) | (byte + nbytes > buf.nbytes)
        if bad.any():
            k = int(np.argmax(bad))
            tid = int(act[k])
            why = (f"byte {int(byte[k])} is not aligned to the access's {nbytes} bytes" if byte[k] % nbytes else
                   f"bytes {int(byte[k])}..{int(byte[k]) + nbytes - 1} fall outside its {buf.nbytes} bytes")
            raise LaunchError(f"{b.ir.name}{self.where}: {self.ptx()} on {self.param.name} at element {int(idx[k])} "
                              f"(thread {tid % b.nt} of block {tid // b.nt} of the batch): {why}; nothing was "
                              f"read or written")
        cols = byte[:, None] + np.arange(nbytes, dtype=np.int64)  # (threads, bytes)
        raw = [c.reshape(-1).view(np.uint8) for c in copies]
        if self.kind == "ld_reduce":
            self._ld_reduce(b, mask, act, raw, cols)
            return
        if self.kind == "st":
            words = np.stack([self._word(b, v, act) for v in self.vals], axis=1)  # (threads, words) uint32
            data = np.ascontiguousarray(words).view(np.uint8).reshape(len(act), nbytes)
            for r in raw:  # every rank's copy, thread by thread in thread order (the last one stays)
                r[cols] = data
            return
        dt = self.param.dtype
        v = np.asarray(b.column(self.vals[0][0], dt, real=False), dtype=dt.storage)[act]
        lock = _at.CROSS_PROCESS_LOCK(buf) if _at.CROSS_PROCESS_LOCK is not None else contextlib.nullcontext()
        with lock, np.errstate(over="ignore"):
            for c in copies:
                flat = c.reshape(-1)
                for k in range(len(act)):
                    flat[idx[k]] = flat[idx[k]] + v[k]

    @staticmethod
    def _word(b: Any, v: Any, act: Any) -> np.ndarray:
        ref, dt = v
        col = np.asarray(b.column(ref, dt, real=False), dtype=dt.storage)[act]
        return np.ascontiguousarray(col).view(np.uint32) if dt.width == 32 else col.astype(np.int64).astype(np.uint32)

    def _ld_reduce(self, b: Any, mask: Any, act: Any, raw: List[np.ndarray], cols: np.ndarray) -> None:
        ename, _, acc = LD_REDUCE_TYPES[self.ptype]
        et = _numeric(ename)
        acc_np = {None: np.float32, "f32": np.float32, "f16": np.float16}[acc]
        total = None
        for r in raw:  # rank order
            bits = np.ascontiguousarray(r[cols]).view(np.dtype(et.storage))  # (threads, elements)
            x = np.asarray(dtypes.to_compute(bits, et), dtype=np.float32).astype(acc_np)
            total = x if total is None else (total + x).astype(acc_np)
        out = np.ascontiguousarray(dtypes.to_storage(total.astype(np.float32), et), dtype=et.storage)
        words = out.view(np.uint8).reshape(len(act), -1).view(np.int32)  # (threads, words)
        cur = b.regs.get(self.dst.id)
        if cur is None or mask is None:
            cur = np.zeros((b.n, self.words), dtype=np.int32)
            b.regs[self.dst.id] = cur
        cur[act, :] = words

    # ---- GPU
    def cuda(self, r: Any) -> None:
        off = r.base(self.base, (0,), self.param, self)
        addr = f"({self.param.name} + {off})"
        p = self.ptx()
        n = self.words
        if self.dst is not None:
            r.declare(self.dst)
        with r.guarded(self):
            if self.kind == "ld_reduce":
                regs = ", ".join(f"%{j}" for j in range(n))
                regs = f"{{{regs}}}" if n > 1 else regs
                outs = ", ".join(f'"=r"(cl_o{j})' for j in range(n))
                r.emit(f"unsigned int {', '.join(f'cl_o{j}' for j in range(n))};")
                r.emit(f'asm volatile("{p} {regs}, [%{n}];" : {outs} : "l"({addr}) : "memory");')
                for j in range(n):
                    r.emit(f"memcpy(&{r.reg(self.dst)}[{j}], &cl_o{j}, 4);")
                return
            c = "l" if self.kind == "red" and self.param.dtype.width == 64 else "r"
            for j, (ref, dt) in enumerate(self.vals):
                st, _, _ = r.ctype(dt)
                u = "unsigned long long" if c == "l" else "unsigned int"
                r.emit(f"{st} cl_v{j} = {r.stored(ref, dt)}; {u} cl_vb{j}; memcpy(&cl_vb{j}, &cl_v{j}, {dt.bytes});")
            regs = ", ".join(f"%{j + 1}" for j in range(len(self.vals)))
            regs = f"{{{regs}}}" if len(self.vals) > 1 else regs
            ins = ", ".join(f'"{c}"(cl_vb{j})' for j in range(len(self.vals)))
            r.emit(f'asm volatile("{p} [%0], {regs};" :: "l"({addr}), {ins} : "memory");')


# --------------------------------------------------------------------------- trace functions

def _sem_scope(kind: str, sem: Any, scope: Any, what: str, t: Any) -> Tuple[Any, Any]:
    sem, scope = _at._s(sem), _at._s(scope)
    if sem == "weak":
        sem = None
    if sem not in _SEMS[kind]:
        raise TraceError(f"kernel {t.name}: {what}: sem={sem!r} is not one of weak, "
                         f"{', '.join(s for s in _SEMS[kind] if s)}{t.where()}")
    scope = {"device": "gpu", "block": "cta"}.get(scope, scope)
    if scope not in (None, "cta", "cluster", "gpu", "sys"):
        raise TraceError(f"kernel {t.name}: {what}: scope={scope!r} is not one of cta, cluster, gpu, sys{t.where()}")
    if sem is None and scope is not None and kind != "red":
        raise TraceError(f"kernel {t.name}: {what}: a weak access takes no scope (scope={scope!r}){t.where()}")
    return sem, scope


def _param(ptr: Any, what: str, t: Any) -> Tuple[Any, Any]:
    param, off = _at._ptr_ref(ptr, what, t)
    if isinstance(param, _at.AddressParam):
        raise TraceError(f"kernel {t.name}: {what}: a pointer made from a runtime address is not supported; pass the "
                         f"multicast tensor to the kernel{t.where()}")
    return param, off


def ld_reduce(mc_ptr: Any, ptype: str, words: int, *, sem: Any = None, scope: Any = None,
              what: str = "multimem.ld_reduce") -> Tuple[TraceValue, ...]:
    """The sum over the ranks of ``words`` 32-bit words of ``ptype`` data at mc_ptr, as Int32 values."""
    from ...numeric import Int32

    t = current(what)
    if ptype not in LD_REDUCE_TYPES or words not in (1, 2, 4):
        raise TraceError(f"kernel {t.name}: {what}: no multimem.ld_reduce of {words} words of {ptype} (types "
                         f"{sorted(LD_REDUCE_TYPES)}, 1, 2 or 4 words){t.where()}")
    sem, scope = _sem_scope("ld_reduce", sem, scope, what, t)
    param, off = _param(mc_ptr, what, t)
    dst = t.new_reg(Int32, words)
    param.read = True
    t.emit(MultimemOp("ld_reduce", param, off, ptype, words, sem, scope, dst=dst, where=t.where()))
    return tuple(TraceValue([(dst, j)], (), Int32) for j in range(words))


def st(mc_ptr: Any, regs: Any, *, sem: Any = None, scope: Any = None, what: str = "multimem.st") -> None:
    """Store 1, 2 or 4 32-bit values (their bits) at mc_ptr in every rank's copy."""
    from ...numeric import Int32

    t = current(what)
    regs = list(regs)
    if len(regs) not in (1, 2, 4):
        raise TraceError(f"kernel {t.name}: {what}: stores 1, 2 or 4 32-bit registers, got {len(regs)}{t.where()}")
    sem, scope = _sem_scope("st", sem, scope, what, t)
    param, off = _param(mc_ptr, what, t)
    vals = []
    for v in regs:
        dt = v.dtype if isinstance(v, TraceValue) else Int32
        if dt.width != 32:
            raise TraceError(f"kernel {t.name}: {what}: the values are 32-bit registers, got a {dt}{t.where()}")
        vals.append((_refs_of(v, 1, dt, what, param.name)[0], dt))
    param.written = True
    t.emit(MultimemOp("st", param, off, "f32", len(regs), sem, scope, vals=vals, where=t.where()))


def red(mc_ptr: Any, val: Any, *, sem: Any = None, scope: Any = None, what: str = "multimem.red") -> None:
    """Every rank's element at mc_ptr += val (``multimem.red...add``; 32- or 64-bit integers, f32)."""
    t = current(what)
    sem, scope = _sem_scope("red", sem, scope, what, t)
    param, off = _param(mc_ptr, what, t)
    dt = param.dtype
    if not (dt.kind in ("int", "uint") and dt.width in (32, 64) or dt.name == "f32"):
        raise TraceError(f"kernel {t.name}: {what}: the pointer is to {dt}; multimem.red.add takes 32- or 64-bit "
                         f"integers or f32{t.where()}")
    v = _refs_of(val, 1, dt, what, param.name)[0]
    param.read = param.written = True
    ptype = _at._ptx_type(dt, "add")
    t.emit(MultimemOp("red", param, off, ptype, 1, sem, scope, vals=[(v, dt)], where=t.where()))
