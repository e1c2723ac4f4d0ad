"""Memory-ordering instructions on global memory: ``cute.arch.load``/``store`` with ``sem``/``scope``
(``ld.acquire.sys``, ``st.release.sys``, ``ld.volatile``), atomics (``atomic_add``, ``_and``, ``_or``,
``_xor``, ``_max``, ``_min``, ``_exch``, ``_cas``), ``red`` and the ``fence.acq_rel`` fences, as the
kernels of CUTLASS's distributed examples use them on flags and signals in symmetric memory.

On the CPU interpreter each executes at once on the tensor's storage, thread by thread in thread
order for read-modify-writes (an atomic's old value is what the previous thread left); memory is
coherent and stores land in program order, so every ordering these instructions ask for holds
(the CPU is stronger than the PTX memory model: a missing fence does not show as a wrong value).
Storage that other processes map (``cutelab.compat.distributed``) is updated under
:data:`CROSS_PROCESS_LOCK` so that atomics of different ranks on one word do not lose updates.
On the GPU each prints as its PTX instruction.

A pointer the kernel makes from an address it holds (``cute.make_ptr(dtype, addr, gmem)`` of an
Int64 loaded from a tensor of peers' ``buffer_ptrs``) is taken by all of these: on the CPU each
thread's address is found when the instruction runs (``kernel.cpu.addresses``), on the GPU the
address is cast to a pointer. Loads and stores take global memory (a kernel's tensor arguments) only; atomics and ``red`` also
take this CTA's shared memory (an unswizzled shared array: ``atom.shared``/``red.shared``, as
CUTLASS's block reductions use them), and ``red`` another CTA's of the cluster (``DsmemRedOp``:
``red.shared::cluster`` through a ``prims.mapa`` pointer). A pointer to register memory, into another CTA or through a
swizzle, a semantic or scope outside PTX's, or an element type the instruction has no form for is
a TraceError naming the instruction and the user's line.
"""

from __future__ import annotations

import contextlib
from typing import Any, List, Optional

import numpy as np

from ...errors import LaunchError, TraceError
from ..ir.nodes import Access, Op, Shared
from ..frontend.trace import TraceValue, _refs_of, current
from .address_access import AddressEngine

__all__ = ["load", "store", "atomic_add", "atomic_and", "atomic_or", "atomic_xor", "atomic_max", "atomic_min",
           "atomic_fmax", "atomic_exch", "atomic_cas", "red", "fence_acq_rel_cta", "fence_acq_rel_cluster", "fence_acq_rel_gpu",
           "fence_acq_rel_sys", "MemOp", "AcqRelFence", "CROSS_PROCESS_LOCK", "ordered_copy",
           "AddressParam"]

#: set by cutelab.compat.distributed: a function (storage array) -> context manager that holds a lock
#: shared by every rank when that storage is mapped by other processes (None: no other process)
CROSS_PROCESS_LOCK: Any = None

_SEMS = {"ld": (None, "relaxed", "acquire", "volatile"), "st": (None, "relaxed", "release", "volatile"),
         "atom": (None, "relaxed", "acquire", "release", "acq_rel"), "red": (None, "relaxed", "release")}
_SCOPES = (None, "cta", "cluster", "gpu", "sys")
_OPS = ("add", "and", "or", "xor", "max", "min", "umax", "umin", "exch", "cas", "inc", "dec", "fmax")


def _s(x: Any) -> Optional[str]:
    """An enum or string argument as its lower-case name (MemOrderKind.ACQUIRE -> "acquire")."""
    if x is None:
        return None
    v = getattr(x, "value", x)
    if not isinstance(v, str):
        v = getattr(x, "name", str(x))
    return str(v).lower()


class AddressParam:
    """The memory of a pointer made in the kernel from a runtime address (``cute.make_ptr(dtype,
    addr, gmem)`` of an Int64 the kernel loaded: a peer's buffer pointer from ``buffer_ptrs``):
    which memory it is becomes known only when the instruction runs (``kernel.cpu.addresses``)."""

    space = "address"
    index = -1
    length = 0

    def __init__(self, addr: Any, dtype: Any, align: int):
        self.addr, self.dtype, self.align = addr, dtype, align
        self.read = self.written = False

    @property
    def name(self) -> str:
        return f"({self.dtype.name} at a runtime address)"

    def __repr__(self) -> str:
        return f"AddressParam({self.dtype} at {self.addr})"


def _ptr_ref(ptr: Any, what: str, t: Any, shared: bool = False):
    """(Param, element offset) of a global-memory pointer (a tensor's iterator, + k) or tensor;
    with ``shared``, also of a pointer into this CTA's (unswizzled) shared memory (a Shared array)."""
    from ...tensor import Pointer, Tensor
    from ..frontend.engines import GmemEngine, SmemEngine

    inner = getattr(ptr, "ptr", None)  # cutlass.Pointer (tensor.iterator.raw_ptr(), Array.data_ptr())
    if not isinstance(ptr, (Pointer, Tensor)) and isinstance(inner, Pointer):
        if getattr(ptr, "peer", None) is not None:
            raise TraceError(f"kernel {t.name}: {what}: a pointer into another CTA's shared memory (prims.mapa) "
                             f"is not supported{t.where()}")
        ptr = inner
    if isinstance(ptr, (Pointer, Tensor)):
        eng, off = ptr.engine, ptr.offset
        if isinstance(eng, AddressEngine):
            if isinstance(off, TraceValue):
                raise TraceError(f"kernel {t.name}: {what}: the pointer's offset must be an index expression, not a "
                                 f"value held in registers{t.where()}")
            t.check_index(off, what)
            return AddressParam(eng.addr, eng.dtype, eng.align), off
    else:
        raise TraceError(f"kernel {t.name}: {what}: expected a pointer into a global-memory tensor "
                         f"(tensor.iterator + k), got {type(ptr).__name__}{t.where()}")
    if shared and isinstance(eng, SmemEngine):
        if getattr(eng, "swizzle", None) is not None:
            raise TraceError(f"kernel {t.name}: {what}: a pointer into swizzled shared memory ({eng.swizzle}) is "
                             f"not supported{t.where()}")
    elif isinstance(eng, SmemEngine) or not isinstance(eng, GmemEngine):
        what_mem = "global or shared memory" if shared else "global memory"
        raise TraceError(f"kernel {t.name}: {what}: only {what_mem} (a tensor argument of the kernel) is supported, "
                         f"got a {getattr(eng, 'memspace', '?')} pointer{t.where()}")
    if isinstance(off, TraceValue):
        raise TraceError(f"kernel {t.name}: {what}: the pointer's offset must be an index expression, not a value "
                         f"held in registers{t.where()}")
    t.check_index(off, what)
    return eng.param, off


def _check(kind: str, sem: Any, scope: Any, what: str, t: Any):
    sem, scope = _s(sem), _s(scope)
    if sem == "weak":
        sem = None
    if sem not in _SEMS[kind]:
        raise TraceError(f"kernel {t.name}: {what}: sem={sem!r} is not one of {[s for s in _SEMS[kind] if s]}"
                         f"{t.where()}")
    if scope == "device":
        scope = "gpu"
    if scope == "block":
        scope = "cta"
    if scope not in _SCOPES:
        raise TraceError(f"kernel {t.name}: {what}: scope={scope!r} is not one of cta, cluster, gpu, sys{t.where()}")
    return sem, scope


class MemOp(Op):
    """One thread's load, store, atomic or reduction of one element of a global tensor.

    kind: "ld" (dst = param[i]), "st" (param[i] = val), "atom" (dst = old; param[i] = op(old, val);
    for "cas": param[i] = val if old == cmp), "red" (an atom without a result).

    An "ld" or "st" may move ``n`` contiguous elements (a copy atom's 128-bit access): dst then has n
    elements and val is a list of n refs. Each element is read or written whole, with the op's order;
    the GPU prints one ``.v2``/``.v4`` access where the address is provably aligned (else one per
    element)."""

    __slots__ = ("kind", "param", "base", "dtype", "sem", "scope", "op", "val", "cmp", "dst", "where", "n", "addr")

    def __init__(self, kind: str, param: Any, base: Any, dtype: Any, sem: Any, scope: Any, op: Optional[str] = None,
                 val: Any = None, cmp: Any = None, dst: Any = None, where: str = "", n: int = 1):
        self.kind, self.param, self.base, self.dtype = kind, param, base, dtype
        self.sem, self.scope, self.op, self.val, self.cmp, self.dst, self.where = sem, scope, op, val, cmp, dst, where
        if n != 1 and kind not in ("ld", "st"):
            raise ValueError(f"MemOp: only loads and stores move several elements, not {kind!r} (n={n})")
        self.n = n
        # a pointer made from a runtime address: the register element holding it (else None)
        self.addr = param.addr if isinstance(param, AddressParam) else None
        if self.addr is not None and n != 1:
            raise ValueError(f"MemOp: an access through a runtime address moves one element, not {n}")

    @property
    def _shared(self) -> bool:
        return isinstance(self.param, Shared)

    def ptx(self) -> str:
        """The PTX opcode this op prints as, e.g. ``atom.release.sys.global.add.s32``."""
        parts = ["atom" if self.kind == "atom" else self.kind]
        if self.sem is not None:
            parts.append(self.sem)
            if self.sem != "volatile":
                parts.append(self.scope or "gpu")
        elif self.scope is not None and self.kind in ("atom", "red"):
            parts.append(self.scope)
        parts.append("shared" if self._shared else "global")
        if self.kind in ("atom", "red"):
            parts.append(self.op)
        parts.append(_ptx_type(self.dtype, self.op if self.kind in ("atom", "red") else None))
        return ".".join(parts)

    def __repr__(self) -> str:
        d = f"{self.dst.name} = " if self.dst is not None else ""
        n = f" x{self.n}" if self.n != 1 else ""
        return f"{d}{self.ptx()}{n} {self.param.name}[{self.base}]"

    def accesses(self) -> List[Access]:
        if self.addr is not None:  # the memory is known when it runs: checked then (kernel.cpu.addresses)
            return []
        acc = []
        offs = tuple(range(self.n))
        if self.kind in ("ld", "atom", "red"):
            acc.append(Access(self.param, self.base, offs, False, self))
        if self.kind in ("st", "atom", "red"):
            acc.append(Access(self.param, self.base, offs, True, self))
        return acc

    # ---- CPU
    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        if self.addr is not None:
            self._interpret_at_addresses(b, mask, buffers)
            return
        buf, length, shift = b.memory(self.param, buffers)  # shared: every block's array, one after another
        act = np.nonzero(np.ones(b.n, dtype=bool) if mask is None else mask)[0]
        idx = np.broadcast_to(np.asarray(b.index(self.base), dtype=np.int64), (b.n,))[act]
        if idx.size and (idx.min() < 0 or idx.max() + self.n - 1 >= length):
            bad = int(act[np.nonzero((idx < 0) | (idx + self.n - 1 >= length))[0][0]])
            raise LaunchError(f"{b.ir.name}{self.where}: {self.ptx()} on {self.param.name} at element "
                              f"{int(np.broadcast_to(np.asarray(b.index(self.base)), (b.n,))[bad])}, but it has "
                              f"{length} elements (thread {bad % b.nt} of block {bad // b.nt} of the batch); "
                              f"nothing was written")
        if shift is not None:
            idx = idx + np.asarray(shift, dtype=np.int64)[act]
        st = self.dtype.storage
        if self.n != 1:
            idx = idx[:, None] + np.arange(self.n, dtype=np.int64)  # (threads, elements)
        if self.kind == "ld":
            self._result(b, mask, act, buf[idx])
            return
        if self.n != 1:
            v = np.stack([np.asarray(b.column(x, self.dtype, real=False), dtype=st)[act] for x in self.val], axis=1)
        else:
            v = np.asarray(b.column(self.val, self.dtype, real=False), dtype=st)[act]
        lock = CROSS_PROCESS_LOCK(buf) if CROSS_PROCESS_LOCK is not None else contextlib.nullcontext()
        if self.kind == "st":
            with lock:
                buf[idx] = v  # in thread order: the last thread's value stays where several write one element
            return
        c = np.asarray(b.column(self.cmp, self.dtype, real=False), dtype=st)[act] if self.op == "cas" else None
        old = np.empty(len(act), dtype=st)
        fn = _RMW[self.op]
        with lock, np.errstate(over="ignore"):
            for k in range(len(act)):  # thread by thread: each sees what the one before it left
                i = idx[k]
                o = buf[i]
                old[k] = o
                buf[i] = (v[k] if o == c[k] else o) if c is not None else fn(o, v[k])
        if self.kind == "atom":
            self._result(b, mask, act, old)

    def _interpret_at_addresses(self, b: Any, mask: Any, buffers: Any) -> None:
        """The instruction through a pointer made from a runtime address: each active thread's
        address is found in the memory this process knows (kernel.cpu.addresses), thread by thread."""
        from ...numeric import Int64
        from ..cpu.addresses import element_at

        act = np.nonzero(np.ones(b.n, dtype=bool) if mask is None else mask)[0]
        if not act.size:
            return
        base = np.asarray(b.column(self.addr, Int64, real=False)).astype(np.int64)[act]
        idx = np.broadcast_to(np.asarray(b.index(self.base), dtype=np.int64), (b.n,))[act]
        addrs = base + idx * self.dtype.bytes
        st = self.dtype.storage
        vals = None if self.kind == "ld" else np.asarray(b.column(self.val, self.dtype, real=False), dtype=st)[act]
        c = np.asarray(b.column(self.cmp, self.dtype, real=False), dtype=st)[act] if self.op == "cas" else None
        out = np.empty(len(act), dtype=st)
        fn = _RMW.get(self.op)
        for k in range(len(act)):
            tid = int(act[k])
            buf, i = element_at(int(addrs[k]), self.dtype, buffers, getattr(b, "addresses", None),
                                f"{b.ir.name}{self.where}: {self.ptx()} (thread {tid % b.nt} of block {tid // b.nt} "
                                f"of the batch)")
            if self.kind == "ld":
                out[k] = buf[i]
                continue
            lock = CROSS_PROCESS_LOCK(buf) if CROSS_PROCESS_LOCK is not None else contextlib.nullcontext()
            with lock, np.errstate(over="ignore"):
                if self.kind == "st":
                    buf[i] = vals[k]
                    continue
                o = buf[i]
                out[k] = o
                buf[i] = (vals[k] if o == c[k] else o) if c is not None else fn(o, vals[k])
        if self.dst is not None:
            self._result(b, mask, act, out)

    def _result(self, b: Any, mask: Any, act: np.ndarray, vals: np.ndarray) -> None:
        cur = b.regs.get(self.dst.id)
        if cur is None or mask is None:
            cur = np.zeros((b.n, self.n), dtype=self.dtype.storage)
            b.regs[self.dst.id] = cur
        if self.n == 1:
            cur[act, 0] = vals
        else:
            cur[act, : self.n] = vals

    # ---- GPU
    def cuda(self, r: Any) -> None:
        bits = self.dtype.width
        if bits < 32 and self.kind == "ld" and self.addr is None and self.n * bits in (64, 128):
            self._cuda_words(r, bits)
            return
        if bits not in (32, 64):
            raise TraceError(f"{self.ptx()}: the CUDA back end prints 32- and 64-bit forms only ({self.dtype})")
        st, _, _ = r.ctype(self.dtype)
        u = "unsigned int" if bits == 32 else "unsigned long long"
        c = "r" if bits == 32 else "l"
        if self.n != 1:
            self._cuda_vector(r, bits, st, u, c)
            return
        if self.addr is not None:  # a pointer made from a runtime address
            off = r.expr(self.base)[0] if not isinstance(self.base, (int, np.integer)) else str(int(self.base))
            from ...numeric import Int64

            addr = f"(({st}*)(unsigned long long)({r.stored(self.addr, Int64)}) + {off})"
        else:
            off = r.base(self.base, (0,), self.param, self)
            addr = f"({self.param.name} + {off})"
        ac = "l"
        if self._shared:  # a shared-window address for atom.shared / red.shared
            addr, ac = r.shared_address(self.param, off), "r"
        if self.dst is not None:
            r.declare(self.dst)  # outside the braces below: later statements read it
        with r.guarded(self):
            if self.kind in ("st", "atom", "red"):
                r.emit(f"{st} cl_v = {r.stored(self.val, self.dtype)}; {u} cl_vb; memcpy(&cl_vb, &cl_v, {bits // 8});")
            if self.op == "cas":
                r.emit(f"{st} cl_c = {r.stored(self.cmp, self.dtype)}; {u} cl_cb; memcpy(&cl_cb, &cl_c, {bits // 8});")
            if self.dst is not None:
                r.emit(f"{u} cl_o;")
            p = self.ptx()
            if self.kind == "ld":
                r.emit(f'asm volatile("{p} %0, [%1];" : "={c}"(cl_o) : "{ac}"({addr}) : "memory");')
            elif self.kind == "st":
                r.emit(f'asm volatile("{p} [%0], %1;" :: "{ac}"({addr}), "{c}"(cl_vb) : "memory");')
            elif self.kind == "red":
                r.emit(f'asm volatile("{p} [%0], %1;" :: "{ac}"({addr}), "{c}"(cl_vb) : "memory");')
            elif self.op == "cas":
                r.emit(f'asm volatile("{p} %0, [%1], %2, %3;" : "={c}"(cl_o) : "{ac}"({addr}), "{c}"(cl_cb), "{c}"(cl_vb) '
                       ': "memory");')
            elif self.op == "fmax":  # CuTe DSL's integer form: max.s32 of the bits, or min.u32 where val < 0
                pmax, pmin = p.replace(".fmax.f32", ".max.s32"), p.replace(".fmax.f32", ".min.u32")
                r.emit(f'if (cl_vb >> 31) asm volatile("{pmin} %0, [%1], %2;" : "={c}"(cl_o) : "{ac}"({addr}), '
                       f'"{c}"(cl_vb) : "memory");')
                r.emit(f'else asm volatile("{pmax} %0, [%1], %2;" : "={c}"(cl_o) : "{ac}"({addr}), "{c}"(cl_vb) '
                       ': "memory");')
            else:
                r.emit(f'asm volatile("{p} %0, [%1], %2;" : "={c}"(cl_o) : "{ac}"({addr}), "{c}"(cl_vb) : "memory");')
            if self.dst is not None:
                r.emit(f"memcpy(&{r.reg(self.dst)}[0], &cl_o, {bits // 8});")

    def _cuda_words(self, r: Any, bits: int) -> None:
        """An ordered load of 8- or 16-bit elements, 64 or 128 bits in all (inline PTX's ``ld.relaxed.gpu.global.
        v4.u32`` of f16 data): one ``.v2``/``.v4`` access of 32-bit words, their bytes copied into the elements
        (the program's own vector instruction promises the alignment, as on the GPU)."""
        k = self.n * bits // 32
        head = self.ptx().rsplit(".", 1)[0]
        off = r.base(self.base, tuple(range(self.n)), self.param, self)
        r.declare(self.dst)
        with r.guarded(self):
            names = ", ".join(f"cl_o{j}" for j in range(k))
            outs = ", ".join(f'"=r"(cl_o{j})' for j in range(k))
            regs = ", ".join(f"%{j}" for j in range(k))
            r.emit(f"{{ unsigned int {names};")
            r.emit(f'  asm volatile("{head}.v{k}.b32 {{{regs}}}, [%{k}];" : {outs} : "l"(({self.param.name} + {off})) '
                   f': "memory");')
            per = 32 // bits
            for j in range(k):
                r.emit(f"  memcpy(&{r.reg(self.dst)}[{j * per}], &cl_o{j}, 4);")
            r.emit("}")

    def _cuda_vector(self, r: Any, bits: int, st: str, u: str, c: str) -> None:
        """n elements: ``ld``/``st`` ``.v2``/``.v4`` where contiguous and provably aligned (the vectorize
        pass's rule), else one access per element; each with the op's order and scope."""
        from ..passes.vectorize import vector_plan

        offs = tuple(range(self.n))
        off = r.base(self.base, offs, self.param, self)  # (offsets from 0: the local includes no shift)
        if self.dst is not None:
            r.declare(self.dst)
        head, ty = self.ptx().rsplit(".", 1)  # e.g. ld.volatile.global | b32
        with r.guarded(self):
            for i, k in vector_plan(self.param, self.base, offs):
                p = f"{head}.v{k}.{ty}" if k > 1 else self.ptx()
                addr = f"({self.param.name} + {off}" + (f" + {i})" if i else ")")
                first = 1 if self.kind == "st" else 0  # the register operands' first %number
                regs = ", ".join(f"%{first + j}" for j in range(k))
                regs = f"{{{regs}}}" if k > 1 else regs
                if self.kind == "ld":
                    outs = ", ".join(f'"={c}"(cl_o{j})' for j in range(k))
                    r.emit(f"{{ {u} {', '.join(f'cl_o{j}' for j in range(k))};")
                    r.emit(f'  asm volatile("{p} {regs}, [%{k}];" : {outs} : "l"({addr}) : "memory");')
                    for j in range(k):
                        r.emit(f"  memcpy(&{r.reg(self.dst)}[{i + j}], &cl_o{j}, {bits // 8});")
                else:
                    r.emit("{")
                    for j in range(k):
                        r.emit(f"  {st} cl_v{j} = {r.stored(self.val[i + j], self.dtype)}; {u} cl_vb{j}; "
                               f"memcpy(&cl_vb{j}, &cl_v{j}, {bits // 8});")
                    ins = ", ".join(f'"{c}"(cl_vb{j})' for j in range(k))
                    r.emit(f'  asm volatile("{p} [%0], {regs};" :: "l"({addr}), {ins} : "memory");')
                r.emit("}")

def _ptx_type(dt: Any, op: Optional[str]) -> str:
    w = dt.width
    if op in ("and", "or", "xor", "exch", "cas") or op is None:
        return f"b{w}"
    if dt.is_float:
        return f"f{w}"
    signed = dt.kind == "int" and op not in ("umax", "umin", "inc", "dec")
    return f"{'s' if signed else 'u'}{w}"


def _max(o: Any, v: Any) -> Any:
    return o if o >= v else v


def _min(o: Any, v: Any) -> Any:
    return o if o <= v else v


def _u32(x: Any) -> int:
    return int(x) & 0xFFFFFFFF


def _inc(o: Any, v: Any) -> Any:
    """``atom.inc.u32``: (old >= v) ? 0 : old + 1, unsigned."""
    r = 0 if _u32(o) >= _u32(v) else _u32(o) + 1
    return np.array(r, np.uint32).view(o.dtype)[()]


def _dec(o: Any, v: Any) -> Any:
    """``atom.dec.u32``: (old == 0 || old > v) ? v : old - 1, unsigned."""
    r = _u32(v) if _u32(o) == 0 or _u32(o) > _u32(v) else _u32(o) - 1
    return np.array(r, np.uint32).view(o.dtype)[()]


def _fmax_bits(o: Any, v: Any) -> Any:
    """The Float32 max of atomic_fmax on the values' bits: signed max of the bits where v's sign bit is
    clear, unsigned min where it is set (as CuTe DSL's atomic_fmax does with integer atomics)."""
    ob, vb = np.float32(o).view(np.uint32), np.float32(v).view(np.uint32)
    if vb >> np.uint32(31):
        r = min(int(ob), int(vb))
    else:
        r = max(int(ob.view(np.int32)), int(vb.view(np.int32))) & 0xFFFFFFFF
    return np.uint32(r).view(np.float32)


_RMW = {"inc": _inc, "dec": _dec, "fmax": _fmax_bits, "add": lambda o, v: o + v, "and": lambda o, v: o & v, "or": lambda o, v: o | v, "xor": lambda o, v: o ^ v,
        "max": _max, "min": _min, "umax": _max, "umin": _min, "exch": lambda o, v: v, "cas": None}


class AcqRelFence(Op):
    """``fence.acq_rel.{cta,cluster,gpu,sys}`` (``cute.arch.fence_acq_rel_*``): no CPU effect (the
    interpreter's memory is coherent and ordered), printed as the fence on the GPU."""

    __slots__ = ("scope",)

    def __init__(self, scope: str):
        self.scope = scope

    def __repr__(self) -> str:
        return f"fence.acq_rel.{self.scope}"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        return None

    def cuda(self, r: Any) -> None:
        r.emit(f'asm volatile("fence.acq_rel.{self.scope};" ::: "memory");')


# --------------------------------------------------------------------------- cute.arch names

def _dtype_of(param: Any, dtype: Any, what: str, t: Any) -> Any:
    if dtype is None or getattr(dtype, "name", None) == param.dtype.name:
        return param.dtype
    if isinstance(dtype, tuple):
        raise TraceError(f"kernel {t.name}: {what}: vector loads are not supported; load the elements one by one"
                         f"{t.where()}")
    raise TraceError(f"kernel {t.name}: {what}: the pointer is to {param.dtype}, the instruction asks for {dtype}"
                     f"{t.where()}")


def _supported(dt: Any, what: str, t: Any, op: Optional[str] = None) -> None:
    if dt.width not in (32, 64) or dt.kind not in ("int", "uint", "float"):
        raise TraceError(f"kernel {t.name}: {what}: {dt} is not supported (32- and 64-bit integers and floats)"
                         f"{t.where()}")
    if op == "fmax" and dt.name != "f32":
        raise TraceError(f"kernel {t.name}: {what}: the pointer is to {dt}; atomic_fmax takes Float32 only{t.where()}")
    if dt.kind == "float" and op not in (None, "add", "exch", "cas", "fmax"):
        raise TraceError(f"kernel {t.name}: {what}: op {op!r} has no floating-point form (only add){t.where()}")
    if op in ("inc", "dec") and dt.width != 32:
        raise TraceError(f"kernel {t.name}: {what}: atom.{op} has a 32-bit form only (.u32), got {dt}{t.where()}")


def _scalar(dst: Any, dt: Any) -> TraceValue:
    return TraceValue([(dst, 0)], (), dt)


def load(ptr: Any, dtype: Any = None, *, sem: Any = None, scope: Any = None, level1_eviction_priority: Any = None,
         cop: Any = None, ss: Any = None, level_prefetch_size: Any = None, loc: Any = None, ip: Any = None) -> Any:
    """One element at ptr (``ld[.sem.scope].global``; ``cop="cv"`` is ``ld.volatile``)."""
    what = "cute.arch.load"
    t = current(what)
    if ss is not None:
        raise TraceError(f"kernel {t.name}: {what}: shared-memory loads (ss={ss!r}) are not supported{t.where()}")
    sem, scope = _check("ld", "volatile" if _s(cop) == "cv" and sem is None else sem, scope, what, t)
    param, off = _ptr_ref(ptr, what, t)
    dt = _dtype_of(param, dtype, what, t)
    _supported(dt, what, t)
    dst = t.new_reg(dt, 1)
    param.read = True
    t.emit(MemOp("ld", param, off, dt, sem, scope, dst=dst, where=t.where()))
    return _scalar(dst, dt)


def store(ptr: Any, val: Any, *, level1_eviction_priority: Any = None, cop: Any = None, ss: Any = None,
          sem: Any = None, scope: Any = None, loc: Any = None, ip: Any = None) -> None:
    """Store val at ptr (``st[.sem.scope].global``)."""
    what = "cute.arch.store"
    t = current(what)
    if ss is not None:
        raise TraceError(f"kernel {t.name}: {what}: shared-memory stores (ss={ss!r}) are not supported{t.where()}")
    sem, scope = _check("st", sem, scope, what, t)
    param, off = _ptr_ref(ptr, what, t)
    if isinstance(val, TraceValue) and len(val.refs) > 1:  # a vector (vector.from_elements): one wide store
        _vector_store(param, off, val, sem, scope, what, t)
        return
    _supported(param.dtype, what, t)
    v = _refs_of(val, 1, param.dtype, what, param.name)[0]
    param.written = True
    t.emit(MemOp("st", param, off, param.dtype, sem, scope, val=v, where=t.where()))


def _vector_store(param: Any, off: Any, val: TraceValue, sem: Any, scope: Any, what: str, t: Any) -> None:
    """``cute.arch.store`` of a vector value (4 x i32 from ``vector.from_elements``, say): its bits as the
    pointer's elements, stored at once (a weak store is the IR's Store, vectorized as any; an ordered one
    a MemOp of several elements)."""
    from ..ir.nodes import Store
    from .bitcast import bitcast

    dt = param.dtype
    bits = len(val.refs) * val.dtype.width
    if isinstance(param, AddressParam) or bits % dt.width or bits > 128:
        raise TraceError(f"kernel {t.name}: {what}: a vector of {len(val.refs)} x {val.dtype} stored through a "
                         f"pointer to {dt}: cutelab stores vectors of up to 128 bits, a whole number of the "
                         f"pointer's elements, into a tensor argument{t.where()}")
    n = bits // dt.width
    v = val if val.dtype.name == dt.name else bitcast(val, dt, what, n=n)
    t.check_refs(v.refs, what)
    param.written = True
    if sem is None and scope is None:
        t.emit(Store(param, off, tuple(range(n)), tuple(v.refs)))
        return
    _supported(dt, what, t)
    t.emit(MemOp("st", param, off, dt, sem, scope, val=list(v.refs), where=t.where(), n=n))


def _ptx_dtype_ok(dt: Any, want: Any) -> bool:
    """Whether a PTX type name ("s32", "f32", "b64", ...) or a numeric type names element type dt."""
    if not isinstance(want, str):
        return getattr(want, "name", None) == dt.name
    kinds = {"f": ("float",), "s": ("int",), "u": ("uint", "int"), "b": ("int", "uint", "float")}
    return want[1:].isdigit() and int(want[1:]) == dt.width and dt.kind in kinds.get(want[0], ())


def _atomic(op: str, ptr: Any, val: Any, sem: Any, scope: Any, what: str, cmp: Any = None, result: bool = True,
            dtype: Any = None) -> Any:
    t = current(what)
    sem, scope = _check("atom" if result else "red", sem, scope, what, t)
    param, off = _ptr_ref(ptr, what, t, shared=True)
    dt = param.dtype
    if dtype is not None and not _ptx_dtype_ok(dt, dtype):
        raise TraceError(f"kernel {t.name}: {what}: the pointer is to {dt}, the instruction asks for {dtype}"
                         f"{t.where()}")
    _supported(dt, what, t, op)
    v = _refs_of(val, 1, dt, what, param.name)[0]
    c = _refs_of(cmp, 1, dt, what, param.name)[0] if op == "cas" else None
    dst = t.new_reg(dt, 1) if result else None
    param.read = param.written = True
    t.emit(MemOp("atom" if result else "red", param, off, dt, sem, scope, op=op, val=v, cmp=c, dst=dst,
                 where=t.where()))
    return _scalar(dst, dt) if result else None


def atomic_add(ptr: Any, val: Any, *, sem: Any = None, scope: Any = None, loc: Any = None, ip: Any = None) -> Any:
    """old = *ptr; *ptr = old + val (``atom.add``); returns old."""
    return _atomic("add", ptr, val, sem, scope, "cute.arch.atomic_add")


def atomic_and(ptr: Any, val: Any, *, sem: Any = None, scope: Any = None, loc: Any = None, ip: Any = None) -> Any:
    return _atomic("and", ptr, val, sem, scope, "cute.arch.atomic_and")


def atomic_or(ptr: Any, val: Any, *, sem: Any = None, scope: Any = None, loc: Any = None, ip: Any = None) -> Any:
    return _atomic("or", ptr, val, sem, scope, "cute.arch.atomic_or")


def atomic_xor(ptr: Any, val: Any, *, sem: Any = None, scope: Any = None, loc: Any = None, ip: Any = None) -> Any:
    return _atomic("xor", ptr, val, sem, scope, "cute.arch.atomic_xor")


def atomic_max(ptr: Any, val: Any, *, sem: Any = None, scope: Any = None, loc: Any = None, ip: Any = None) -> Any:
    return _atomic("max", ptr, val, sem, scope, "cute.arch.atomic_max")


def atomic_min(ptr: Any, val: Any, *, sem: Any = None, scope: Any = None, loc: Any = None, ip: Any = None) -> Any:
    return _atomic("min", ptr, val, sem, scope, "cute.arch.atomic_min")


def atomic_fmax(ptr: Any, val: Any, *, sign_bit: Any = None, sem: Any = None, scope: Any = None, loc: Any = None,
                ip: Any = None) -> Any:
    """old = *ptr; *ptr = max(old, val) on Float32 (CuTe DSL's ``cute.arch.atomic_fmax``); returns old.

    As CuTe DSL builds it, through integer atomics on the bits: a val whose sign bit is clear is an
    ``atom.max.s32`` of the bits, one whose sign bit is set an ``atom.min.u32``. So a NaN with a clear
    sign bit (the canonical NaN) wins over every number, +-inf and +-0 order as numbers (-0 < +0).
    ``sign_bit`` (a promise of val's sign, which the DSL trusts) is accepted and not needed here: the
    sign is read from val itself, on the CPU and in the printed CUDA."""
    if sign_bit is not None and not isinstance(sign_bit, bool):
        raise TraceError(f"cute.arch.atomic_fmax: sign_bit must be None or a Python bool, got {sign_bit!r}")
    return _atomic("fmax", ptr, val, sem, scope, "cute.arch.atomic_fmax")


def atomic_exch(ptr: Any, val: Any, *, sem: Any = None, scope: Any = None, loc: Any = None, ip: Any = None) -> Any:
    return _atomic("exch", ptr, val, sem, scope, "cute.arch.atomic_exch")


def atomic_cas(ptr: Any, *, cmp: Any, val: Any, sem: Any = None, scope: Any = None, loc: Any = None,
               ip: Any = None) -> Any:
    """old = *ptr; if old == cmp: *ptr = val (``atom.cas``); returns old."""
    return _atomic("cas", ptr, val, sem, scope, "cute.arch.atomic_cas", cmp=cmp)


def red(ptr: Any, val: Any, *, op: Any, dtype: Any = None, sem: Any = None, scope: Any = None, loc: Any = None,
        ip: Any = None) -> None:
    """*ptr = op(*ptr, val) with no result (``red``)."""
    o = _s(op)
    if o not in ("add", "and", "or", "xor", "max", "min", "umax", "umin"):
        raise TraceError(f"cute.arch.red: op={op!r} is not one of add, and, or, xor, max, min, umax, umin")
    _atomic(o, ptr, val, sem, scope, "cute.arch.red", result=False, dtype=_s(dtype) if isinstance(dtype, str) else dtype)


def _fence(scope: str) -> None:
    current(f"cute.arch.fence_acq_rel_{scope}").emit(AcqRelFence(scope))


def fence_acq_rel_cta(*, loc: Any = None, ip: Any = None) -> None:
    _fence("cta")


def fence_acq_rel_cluster(*, loc: Any = None, ip: Any = None) -> None:
    _fence("cluster")


def fence_acq_rel_gpu(*, loc: Any = None, ip: Any = None) -> None:
    _fence("gpu")


def fence_acq_rel_sys(*, loc: Any = None, ip: Any = None) -> None:
    _fence("sys")


# --------------------------------------------------------------------------- copy atoms with a memory order

def ordered_copy(atom: Any, src: Any, dst: Any, pred: Any, t: Any) -> bool:
    """``cute.copy`` with ``CopyG2ROp``/``CopyR2GOp`` whose memory_order is not weak (volatile, relaxed,
    acquire, release): one ``ld``/``st`` with that order and scope per element (Lamport's kernel
    polls ``ld.volatile.sys``). False (nothing done) for any other copy. The atom's access width
    (``num_bits_per_copy``) over contiguous elements is one MemOp of several elements, printed as one
    ``.v4``/``.v2`` access where provably aligned; each element is read and written whole."""
    op = getattr(atom, "op", None)
    name = type(op).__name__
    if name not in ("CopyG2ROp", "CopyR2GOp"):
        return False
    kw = getattr(atom, "_kwargs", {}) or {}
    order = _s(kw.get("memory_order")) or "weak"
    if order == "weak":
        return False
    what = f"cute.copy with {name}(memory_order={order})"
    kind = "ld" if name == "CopyG2ROp" else "st"
    if order not in _SEMS[kind]:
        raise TraceError(f"kernel {t.name}: {what}: a {'load' if kind == 'ld' else 'store'} has no {order} form "
                         f"(PTX: {', '.join(s for s in _SEMS[kind] if s)}){t.where()}")
    if pred is not None:
        raise TraceError(f"kernel {t.name}: {what}: predicated copies with a memory order are not supported{t.where()}")
    scope = _s(kw.get("memory_scope")) or "cta"
    from ...layout import size

    gm = src if kind == "ld" else dst
    n = int(size(src.layout))
    dt = gm.engine.param.dtype if hasattr(gm.engine, "param") else None
    bits = kw.get("num_bits_per_copy")
    k = int(bits) // dt.width if bits and dt is not None and dt.width in (32, 64) else 1
    sem, scope = order, None if order == "volatile" else scope
    i = 0
    while i < n:
        if k > 1 and i + k <= n and _contiguous(gm, i, k):
            _vector_access(kind, gm, src, dst, i, k, sem, scope, what, t)
            i += k
            continue
        ptr = _element_ptr(gm, i)
        if kind == "ld":
            dst[i] = load(ptr, None, sem=sem, scope=scope)
        else:
            store(ptr, src[i], sem=sem, scope=scope)
        i += 1
    return True


def _contiguous(tensor: Any, i: int, k: int) -> bool:
    """Whether elements i .. i+k-1 of tensor lie at consecutive (static) offsets."""
    offs = [tensor.layout(i + j) for j in range(k)]
    return all(isinstance(o, int) for o in offs) and all(offs[j] == offs[0] + j for j in range(k))


def _vector_access(kind: str, gm: Any, src: Any, dst: Any, i: int, k: int, sem: Any, scope: Any, what: str,
                   t: Any) -> None:
    """Elements i .. i+k-1 of an ordered copy as one MemOp of k elements (the atom's 128-bit access)."""
    _supported(gm.engine.param.dtype, what, t)
    param, off = _ptr_ref(_element_ptr(gm, i), what, t)
    dt = param.dtype
    if kind == "ld":
        reg = t.new_reg(dt, k)
        param.read = True
        t.emit(MemOp("ld", param, off, dt, sem, scope, dst=reg, where=t.where(), n=k))
        for j in range(k):
            dst[i + j] = TraceValue([(reg, j)], (), dt)
    else:
        vals = [_refs_of(src[i + j], 1, dt, what, param.name)[0] for j in range(k)]
        param.written = True
        t.emit(MemOp("st", param, off, dt, sem, scope, val=vals, where=t.where(), n=k))


def _element_ptr(tensor: Any, i: int) -> Any:
    from ...tensor import Pointer

    return Pointer(tensor.engine, tensor.offset + tensor.layout(i))


# --------------------------------------------------------------------------- inline PTX on global addresses

_ASM_TYPES = {"b32": 32, "u32": 32, "s32": 32, "f32": 32, "b64": 64, "u64": 64, "s64": 64, "f64": 64}


def asm_on_global(operands: List[Any], asm: str, constraints: str, where: str, what: str) -> Any:
    """Inline PTX with a global-memory address operand (``gmem_ptr.toint().ir_value()`` of a kernel
    argument), lowered to this module's ops, as cutelab's memory has no machine addresses: one
    instruction ``ld[.global][.relaxed|.acquire|.volatile][.scope].T $0, [$k]``, ``st... [$k], $j``,
    ``atom[.global][.sem][.scope].OP.T $0, [$k], $j`` or ``red...OP.T [$k], $j`` (OP add, and, or,
    xor, max, min, exch; T of the pointer's element width). Anything else is refused naming the
    instruction and the program's line."""
    import re

    from ...address import PointerInt, pointer_from_int
    from .ptx import NotInterpreted

    text = asm.strip().strip("{}").strip()
    parts = [x.strip() for x in text.split(";") if x.strip()]
    head = parts[0].split()[0] if parts else text
    if len(parts) != 1:
        raise NotInterpreted(f"{what} at {where}: a program of {len(parts)} instructions with a global-memory address "
                             f"operand; cutelab lowers one ld, st, atom or red instruction on an address",
                             f"PTX program with addresses ({head})")
    m = re.fullmatch(r"(\S+)\s+(.*)", parts[0], re.S)
    opcode, args = (m.group(1), m.group(2)) if m else (parts[0], "")
    cons = [c.strip() for c in constraints.split(",") if c.strip() and not c.strip().startswith("~")]
    nout = sum(1 for c in cons if c.startswith("="))
    mods = opcode.split(".")
    kind = mods[0]
    refuse = (f"{what} at {where}: PTX instruction '{opcode}' with a global-memory address operand is not lowered "
              f"(cutelab lowers ld/st/atom/red[.global][.sem][.scope][.op].T with T one of {sorted(_ASM_TYPES)})")
    if kind not in ("ld", "st", "atom", "red"):
        raise NotInterpreted(refuse, opcode)
    sem = scope = op = ty = None
    vec = 1
    for md in mods[1:]:
        if md == "global" or md == "weak" and sem is None and kind in ("ld", "st"):
            continue
        if md in ("v2", "v4") and kind in ("ld", "st") and vec == 1:
            vec = int(md[1])
            continue
        if md in ("relaxed", "acquire", "release", "acq_rel", "volatile") and sem is None:
            sem = md
        elif md in ("cta", "cluster", "gpu", "sys") and scope is None:
            scope = md
        elif md in _OPS and kind in ("atom", "red") and op is None:
            op = md
        elif md in _ASM_TYPES and ty is None:
            ty = md
        else:
            raise NotInterpreted(refuse, opcode)
    toks = [x.strip() for x in re.split(r",(?![^\[]*\])(?![^{]*})", args)]

    def operand(tok: str) -> Any:
        mm = re.fullmatch(r"\$(\d+)", tok)
        k = int(mm.group(1)) - nout if mm else -1
        if not 0 <= k < len(operands):
            raise NotInterpreted(f"{what} at {where}: operand {tok!r} of {opcode} is not an input $n", opcode)
        return operands[k]

    def address(tok: str) -> Any:
        mm = re.fullmatch(r"\[\s*(\$\d+)\s*(?:\+\s*(\d+))?\s*\]", tok)
        if mm is None:
            raise NotInterpreted(f"{what} at {where}: {opcode}: the address {tok!r} is not [$n] or [$n+imm]", opcode)
        a = operand(mm.group(1))
        if not isinstance(a, PointerInt):
            raise TraceError(f"{what} at {where}: {opcode}: the address must be a global pointer's address "
                             f"(ptr.toint().ir_value()), got {a!r}")
        if mm.group(2):
            a = a + int(mm.group(2))
        ptr = pointer_from_int(a.ptr.engine.dtype, a, "gmem", None)
        width = ptr.engine.dtype.width
        if vec > 1 and ty is not None and (vec * _ASM_TYPES[ty]) % width == 0:  # a vector of the pointer's elements
            return ptr
        if ty is None or _ASM_TYPES[ty] != width:
            raise TraceError(f"{what} at {where}: {opcode}: the instruction's type .{ty} does not match the "
                             f"pointer's {ptr.engine.dtype} elements")
        return ptr

    if vec > 1:
        return _asm_vector(kind, toks, vec, ty, sem, scope, nout, operand, address, opcode, refuse, what, where)
    n_expect = {"ld": (2, 1), "st": (2, 0), "atom": (3 if op != "cas" else 4, 1), "red": (2, 0)}[kind]
    if op == "cas" or (kind in ("atom", "red") and op is None) or len(toks) != n_expect[0] or nout != n_expect[1]:
        raise NotInterpreted(refuse + f"; got operands {args.strip()!r} with {nout} outputs", opcode)
    if kind == "ld":
        if toks[0] != "$0":
            raise NotInterpreted(refuse, opcode)
        return load(address(toks[1]), sem=sem, scope=scope)
    if kind == "st":
        return store(address(toks[0]), operand(toks[1]), sem=sem, scope=scope)
    if kind == "red":
        return _atomic(op, address(toks[0]), operand(toks[1]), sem, scope, f"{what} ({opcode})", result=False)
    if toks[0] != "$0":
        raise NotInterpreted(refuse, opcode)
    return _atomic(op, address(toks[1]), operand(toks[2]), sem, scope, f"{what} ({opcode})")


def _asm_vector(kind: str, toks: List[str], vec: int, ty: Any, sem: Any, scope: Any, nout: int, operand: Any,
                address: Any, opcode: str, refuse: str, what: str, where: str) -> Any:
    """``ld[.weak|.sem.scope].global.vN.T {$0, ..}, [$k]`` / ``st... [$k], {$a, ..}`` (N 2 or 4; 32- or 64-bit
    T) through a kernel argument's address: the vector's bytes as the pointer's elements (a 128-bit load of
    f16 data as 4 x u32, say), one access; a load returns N values of T."""
    from ...numeric import Float32, Float64, Int32, Int64
    from ..ir.nodes import Load
    from .ptx import NotInterpreted

    def regs(tok: str) -> List[str]:
        if not (tok.startswith("{") and tok.endswith("}")):
            raise NotInterpreted(refuse + f"; a vector takes a register list {{..}}, got {tok!r}", opcode)
        items = [x.strip() for x in tok[1:-1].split(",")]
        if len(items) != vec:
            raise NotInterpreted(f"{what} at {where}: {opcode} takes {vec} registers, got {tok!r}", opcode)
        return items

    bits = _ASM_TYPES[ty]
    word = {("f", 32): Float32, ("f", 64): Float64}.get((ty[0], bits), Int32 if bits == 32 else Int64)
    if len(toks) != 2:
        raise NotInterpreted(refuse + f"; got {len(toks)} operands", opcode)
    if kind == "ld":
        outs = regs(toks[0])
        if nout != vec or outs != [f"${i}" for i in range(vec)]:
            raise NotInterpreted(refuse + "; the outputs are $0..$N-1", opcode)
        ptr = address(toks[1])
        param, off = _ptr_ref(ptr, what, current(what))
        t = current(what)
        dt = param.dtype
        n = vec * bits // dt.width
        if sem is None and scope is None:
            dst = t.new_reg(dt, n)
            param.read = True
            t.emit(Load(dst, param, off, tuple(range(n))))
        elif dt.width in (32, 64) or n * dt.width in (64, 128):
            if dt.width in (32, 64):
                _supported(dt, what, t)
            sem_, scope_ = _check("ld", sem, scope, what, t)
            dst = t.new_reg(dt, n)
            param.read = True
            t.emit(MemOp("ld", param, off, dt, sem_, scope_, dst=dst, where=t.where(), n=n))
        else:
            raise NotInterpreted(f"{what} at {where}: {opcode} with a memory order on a pointer to {dt}: cutelab's "
                                 f"ordered vector loads take 32- or 64-bit elements, or 64 or 128 bits of narrower ones", opcode)
        v = TraceValue([(dst, i) for i in range(n)], (n,), dt)
        if word.name != dt.name:
            from .bitcast import bitcast

            v = bitcast(v, word, what, n=vec)
        return tuple(TraceValue([r], (), word) for r in v.refs)
    ins = regs(toks[1])
    vals = [operand(x) for x in ins]
    refs = []
    for x in vals:
        refs.extend(_refs_of(x, 1, word, what, "the vector")[0:1])
    return store(address(toks[0]), TraceValue(refs, (vec,), word), sem=sem, scope=scope)


# --------------------------------------------------------------------------- red into another CTA's shared memory

class DsmemRedOp(Op):
    """``red.shared::cluster.{op}.{type}``: ``shared[base] = op(shared[base], val)`` in CTA ``peer``
    of the cluster (a pointer from ``prims.mapa``), no result. On the CPU, thread by thread in
    thread order on the peer block's array (the batch holds the whole cluster); on the GPU, ``mapa``
    then the instruction."""

    remote = True  # another CTA's shared memory: the race check (cpu/warps.py) leaves it out

    __slots__ = ("shared", "base", "peer", "self_rank", "dtype", "op", "sem", "scope", "val", "where")

    def __init__(self, shared: Any, base: Any, peer: Any, self_rank: Any, dtype: Any, op: str, sem: Any, scope: Any,
                 val: Any, where: str = ""):
        self.shared, self.base, self.peer, self.self_rank = shared, base, peer, self_rank
        self.dtype, self.op, self.sem, self.scope, self.val, self.where = dtype, op, sem, scope, val, where

    def ptx(self) -> str:
        parts = ["red"] + ([self.sem, self.scope or "cluster"] if self.sem is not None else
                           [self.scope] if self.scope is not None else [])
        return ".".join(parts + ["shared::cluster", self.op, _ptx_type(self.dtype, self.op)])

    def __repr__(self) -> str:
        return f"{self.ptx()} {self.shared.name}@cta[{self.peer}][{self.base}]"

    def accesses(self) -> List[Access]:
        return [Access(self.shared, self.base, (0,), True, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        from .cluster import _peer_blocks

        sh = self.shared
        where = self.where
        peer_blk = _peer_blocks(b, mask, self.peer, self.self_rank, self.ptx(), where)
        idx = b.access_index(self.base, (0,), sh.length, f"{b.ir.name}: {self.ptx()}", mask, where)[:, 0]
        act = np.nonzero(np.ones(b.n, dtype=bool) if mask is None else mask)[0]
        flat = (idx + peer_blk * sh.length)[act]
        buf = b.shared[sh.index]
        v = np.asarray(b.column(self.val, self.dtype, real=False), dtype=self.dtype.storage)[act]
        fn = _RMW[self.op]
        with np.errstate(over="ignore"):
            for k in range(len(act)):
                buf[flat[k]] = fn(buf[flat[k]], v[k])

    def cuda(self, r: Any) -> None:
        from .cluster import _ptx_rank
        from .mbarrier import smem_addr

        bits = self.dtype.width
        st, _, _ = r.ctype(self.dtype)
        u, c = ("unsigned int", "r") if bits == 32 else ("unsigned long long", "l")
        with r.braces():
            r.emit(f"{st} cl_v = {r.stored(self.val, self.dtype)}; {u} cl_vb; memcpy(&cl_vb, &cl_v, {bits // 8});")
            r.emit(f'unsigned cl_a; asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(cl_a) : '
                   f'"r"({smem_addr(r, self.shared, self.base)}), "r"({_ptx_rank(r, self.peer)}));')
            r.emit(f'asm volatile("{self.ptx()} [%0], %1;" :: "r"(cl_a), "{c}"(cl_vb) : "memory");')


def dsmem_red(smem_ptr: Any, peer: Any, val: Any, *, op: str, dtype: Any = None, sem: Any = None, scope: Any = None,
              what: str = "red.shared::cluster") -> None:
    """red on the element at smem_ptr (this CTA's shared memory) in CTA ``peer``'s copy of it."""
    from .cluster import _rank_arg, _rank_expr, _smem_ref

    t = current(what)
    sem, scope = _check("red", sem, scope, what, t)
    sh, off = _smem_ref(smem_ptr, what)
    dt = sh.dtype
    _supported(dt, what, t, op)
    if dtype is not None and not _ptx_dtype_ok(dt, dtype):
        raise TraceError(f"kernel {t.name}: {what}: the pointer is to {dt}, the instruction asks for {dtype}"
                         f"{t.where()}")
    v = _refs_of(val, 1, dt, what, sh.name)[0]
    p = _rank_arg(peer, what, t)
    sh.read = sh.written = True
    t.emit(DsmemRedOp(sh, off, p, _rank_expr(t), dt, op, sem, scope, v, t.where()))
