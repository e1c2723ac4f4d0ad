"""A pointer whose address is a runtime value (a register), and the loads and stores through it.

``cute.make_ptr(dtype, a, cute.AddressSpace.gmem, assumed_align=16)`` in a kernel, where ``a`` is an
Int64 the kernel computed or read from memory (grouped GEMMs keep each group's A, B and C addresses
in a global array), is a pointer to memory that only the address names (CuTe DSL's ``inttoptr``).
cutelab's other pointers are a memory it knows and an offset into it; this one is an
``AddressEngine``: the register holding the byte address, and an element offset from it.
``ptr.toint()`` is the address again (a register value); ``cute.make_tensor(ptr, layout)`` makes a
tensor whose element loads and stores are ``AddressAccessOp``s:

- CUDA: ``((T*)addr)[offset + k]``, as the GPU reads any address;
- CPU: the address is looked up, per thread, among the memory the launch knows
  (``address_memory``): the kernel's tensor arguments (the interpreter's working copies of them,
  so a launch sees its own writes) and the memory of the emulated CUDA device
  (``cutelab.runtime.device_memory``: "cuda" torch tensors under ``cutelab run``, cudaMalloc).
  An address in no such memory, past its end or not at a whole element of it is a LaunchError
  naming the op and the program's line; nothing is read or written there. Writes to device memory
  that is not a kernel argument are made in place, as the kernel makes them.

Shared-memory addresses (32-bit) of this kind are refused: a kernel's shared memory is the arrays
it allocated, which cutelab names (make_ptr of ``ptr.toint()`` of one of them keeps its array).

The other way: ``ptr.toint()`` of a pointer into a kernel's global-memory argument is a
``cutelab.address.PointerInt`` (the argument and an offset) for as long as the program only moves
it and makes a pointer of it again. Where it must become a machine address (stored into a
register fragment, shuffled to another lane, moved by a computed offset: flash_attn.cute's
PackGQA keeps one row address per thread and shuffles them), ``address_register`` makes it an
Int64 register value by a ``ParamAddress`` op: the argument's address (CUDA: the pointer; CPU:
the address the launch gave it) plus the byte offset. A pointer made of that value is an
``AddressEngine`` pointer like any other, so the interpreter finds the argument's memory by the
address and checks each access.
"""

from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np

from ...errors import LaunchError, TraceError, user_location
from ...layout import Layout
from ...tensor import Pointer, PointerInfo
from ..frontend.trace import TraceValue, _refs_of, _static_offsets, current
from ..ir.nodes import Op
from ..ir.symbolic import is_sym, sym_div

__all__ = ["AddressAccessOp", "AddressEngine", "ParamAddress", "address_memory", "address_register", "resolve",
           "runtime_pointer"]


def address_memory(b: Any, buffers: Any) -> List[Tuple[int, np.ndarray]]:
    """(first byte address, bytes as a flat uint8 array) of each kernel tensor argument the launch
    knows the address of: the interpreter's working copies of the arguments (kept in b.common)."""
    key = ("address_memory", id(buffers))
    got = b.common.get(key)
    if got is None:
        got = []
        addrs = getattr(b, "addresses", None) or {}
        for p in b.ir.params:
            if p.kind != "pointer" or p.index not in addrs or p.index not in buffers:
                continue
            buf = buffers[p.index]
            if isinstance(buf, np.ndarray) and buf.flags.c_contiguous and buf.nbytes:
                got.append((int(addrs[p.index]), buf.reshape(-1).view(np.uint8)))
        b.common[key] = got
    return got


def _region(b: Any, buffers: Any, address: int) -> Any:
    for lo, mem in address_memory(b, buffers):
        if lo <= address < lo + mem.size:
            return lo, mem
    from ...runtime import device_memory

    return device_memory(address)


def resolve(b: Any, buffers: Any, addrs: np.ndarray, dtype: Any, what: str) -> List[Tuple[np.ndarray, Any, np.ndarray]]:
    """Group the byte addresses addrs (any shape) by the memory that holds them: a list of
    (elements of that memory read as dtype's storage, mask of addrs in it, their element indices).
    Refuses (LaunchError naming ``what``) an address in no memory the launch knows, an element
    that runs past the end of its memory, or one that is not at a whole element of it."""
    eb = dtype.bytes
    flat = np.asarray(addrs, dtype=np.int64)
    left = np.ones(flat.shape, dtype=bool)
    out = []
    while left.any():
        a = int(flat[left].flat[0])
        reg = _region(b, buffers, a)
        if reg is None:
            raise LaunchError(f"{what}: address 0x{a:x} is in no memory this launch knows (the kernel's tensor "
                              f"arguments, or memory of the emulated CUDA device: 'cuda' torch tensors, cudaMalloc); "
                              f"nothing was read or written")
        lo, mem = reg
        inside = left & (flat >= lo) & (flat < lo + mem.size)
        rel = flat[inside] - lo
        if (rel % eb).any():
            bad = int(flat[inside][(rel % eb) != 0][0])
            raise LaunchError(f"{what}: address 0x{bad:x} is not at a whole {eb}-byte {dtype} element of the memory "
                              f"at 0x{lo:x} it points into")
        if (rel + eb > mem.size).any():
            bad = int(flat[inside][rel + eb > mem.size][0])
            raise LaunchError(f"{what}: the {dtype} element at address 0x{bad:x} runs past the end of the "
                              f"{mem.size}-byte memory at 0x{lo:x} it points into; nothing was read or written")
        elems = mem[: mem.size // eb * eb].view(dtype.storage)
        out.append((elems, inside, rel // eb))
        left &= ~inside
    return out


class AddressAccessOp(Op):
    """``dst[k] = ((T*)addr)[base + offsets[k]]`` (a load) or ``((T*)addr)[base + offsets[k]] =
    src[k]`` (a store): ``addr`` is a register element holding the byte address (Int64), ``base`` an
    index expression in elements, ``offsets`` static element offsets."""

    __slots__ = ("addr", "base", "offsets", "dtype", "dst", "src", "where", "stores_by_address")

    def __init__(self, addr: Any, base: Any, offsets: Tuple[int, ...], dtype: Any, dst: Any = None,
                 src: Any = None, where: str = ""):
        self.addr, self.base, self.offsets, self.dtype = addr, base, tuple(offsets), dtype
        self.dst, self.src, self.where = dst, src, where
        self.stores_by_address = dst is None  # a store may write any tensor (ir.nodes.Op.stores_by_address)

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        at = f"(({self.dtype.name}*){_ref_str(self.addr)})[{_ref_str(self.base)} + {list(self.offsets)}]"
        return f"{self.dst!r} = load {at}" if self.dst is not None else f"store {at} = {len(self.src)} values"

    # ---- CPU
    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        from ...numeric import Int64

        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        n = len(self.offsets)
        if self.dst is not None:
            cur = b.regs.get(self.dst.id)
            if cur is None or mask is None:
                cur = np.zeros((b.n, n), dtype=self.dtype.storage)
                b.regs[self.dst.id] = cur
        if act.size == 0:
            return
        addr = np.asarray(b.column(self.addr, Int64, real=True), dtype=np.int64)
        addr = np.broadcast_to(addr, (b.n,))[act]
        base = np.broadcast_to(np.asarray(b.index(self.base), dtype=np.int64), (b.n,))[act]
        byte = addr[:, None] + (base[:, None] + np.asarray(self.offsets, dtype=np.int64)[None, :]) * self.dtype.bytes
        what = f"{b.ir.name}{self.where}: {'load from' if self.dst is not None else 'store to'} a pointer made from " \
               f"a runtime address (cute.make_ptr of an Int64)"
        parts = resolve(b, buffers, byte, self.dtype, what)
        if self.dst is not None:
            got = np.zeros(byte.shape, dtype=self.dtype.storage)
            for elems, inside, idx in parts:
                got[inside] = elems[idx]
            cur[act] = got
            return
        vals = np.broadcast_to(b.matrix(self.src, self.dtype), (b.n, n))[act]
        for elems, inside, idx in parts:
            elems[idx] = np.asarray(vals, dtype=self.dtype.storage)[inside]

    # ---- GPU
    def cuda(self, r: Any) -> None:
        from ...numeric import Int64

        st, _, _ = r.ctype(self.dtype)
        base = r.expr(self.base)[0] if not isinstance(self.base, int) else str(self.base)
        ptr = r.fresh("cl_ap")
        cq = "const " if self.dst is not None else ""
        if self.dst is not None:
            r.declare(self.dst)
        with r.braces():
            r.emit(f"{cq}{st}* {ptr} = ({cq}{st}*)(unsigned long long)({r.value(self.addr, Int64)}) + ({base});")
            for k, o in enumerate(self.offsets):
                if self.dst is not None:
                    r.emit(f"{r.reg(self.dst)}[{k}] = {ptr}[{o}];")
                else:
                    r.emit(f"{ptr}[{o}] = {r.stored(self.src[k], self.dtype)};")

    def accesses(self) -> list:
        return []  # the memory is found at run time: the interpreter checks each address (resolve)


class ParamAddress(Op):
    """``dst = (Int64)(param + base) + delta``: the byte address of element ``base`` (an index
    expression) of kernel argument ``param``, plus ``delta`` bytes (an index expression)."""

    __slots__ = ("dst", "param", "base", "delta", "where")

    def __init__(self, dst: Any, param: Any, base: Any, delta: Any, where: str = ""):
        self.dst, self.param, self.base, self.delta, self.where = dst, param, base, delta, where

    def __repr__(self) -> str:
        from ..ir.nodes import _s

        return f"{self.dst!r} = address of {self.param.name}[{_s(self.base)}] + {_s(self.delta)} bytes"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        addr = (getattr(b, "addresses", None) or {}).get(self.param.index)
        if not addr:
            raise LaunchError(f"{b.ir.name}{self.where}: the address of {self.param.name} (ptr.toint() kept in a "
                              f"register) is not known to this launch; nothing was computed")
        cur = b.regs.get(self.dst.id)
        if cur is None or mask is None:
            cur = np.zeros((b.n, 1), dtype=np.int64)
            b.regs[self.dst.id] = cur
        base = np.broadcast_to(np.asarray(b.index(self.base), dtype=np.int64), (b.n,))
        delta = np.broadcast_to(np.asarray(b.index(self.delta), dtype=np.int64), (b.n,))
        val = int(addr) + base * self.param.dtype.bytes + delta
        if mask is None:
            cur[:, 0] = val
        else:
            cur[mask, 0] = val[mask]

    def cuda(self, r: Any) -> None:
        base = r.expr(self.base)[0] if not isinstance(self.base, (int, np.integer)) else str(int(self.base))
        delta = r.expr(self.delta)[0] if not isinstance(self.delta, (int, np.integer)) else str(int(self.delta))
        r.declare(self.dst)
        r.emit(f"{r.reg(self.dst)}[0] = (long long)(unsigned long long)({self.param.name} + ({base})) + ({delta});")


def _plain(x: Any) -> Any:
    """An offset as the tracer holds it: a static cutlass integer (Int32(3)) as its int."""
    if isinstance(x, TraceValue) or is_sym(x) or isinstance(x, (int, np.integer)):
        return x
    v = getattr(x, "value", None)
    return int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) else x


def address_register(a: Any) -> TraceValue:
    """``a`` (an ``address.PointerInt``: a pointer plus a byte offset) as an Int64 register value
    of the kernel: the address of a global-memory argument's element (ParamAddress), or of a
    pointer already at a runtime address. Refused, naming the use, for other memory."""
    from ...numeric import Int64
    from ..frontend.engines import GmemEngine, SmemEngine

    at = user_location()
    ptr, eng, d = a.ptr, a.ptr.engine, _plain(a.delta)
    what = f"ptr<{eng.dtype.name}, {ptr.memspace}>.toint() kept in a register (at {at or 'an unknown line'})"
    if isinstance(eng, AddressEngine):
        v = eng.address_of(ptr.offset)
    elif isinstance(eng, GmemEngine) and not isinstance(eng, SmemEngine) and str(eng.memspace) in ("gmem", "generic"):
        t = current(what)
        if eng.dtype.width < 8:
            raise TraceError(f"{what}: the address of a {eng.dtype} element (packed {8 // eng.dtype.width} to a byte) "
                             f"is not a byte address; cutelab keeps addresses of whole-byte elements in registers")
        off = _plain(ptr.offset)
        moved = None
        if isinstance(off, TraceValue):  # an element offset computed in registers: added below
            moved, off = off, 0
        t.check_index(off, what)
        static = not isinstance(d, TraceValue)  # a byte offset that is a number or an index: in the op
        if static and is_sym(d):
            t.check_index(d, what)
        dst = t.new_reg(Int64, 1)
        eng.param.read = eng.param.written = True  # the address may be read and written through
        t.emit(ParamAddress(dst, eng.param, off, d if static else 0, f" (at {at})" if at else ""))
        v = TraceValue([(dst, 0)], (), Int64)
        if moved is not None:
            v = v + (moved.to(Int64) if moved.dtype.name != "Int64" else moved) * eng.dtype.bytes
        if static:
            return v
    else:
        raise TraceError(f"{what}: the address of a pointer into {ptr.memspace} memory cannot be kept in a register "
                         f"in cutelab (its {ptr.memspace} memory is arrays it names, not machine addresses); only "
                         f"global memory's addresses can")
    if isinstance(d, TraceValue):
        return v + (d.to(Int64) if d.dtype.name != "Int64" else d)
    if is_sym(d):
        from ..frontend.trace import _index_value

        return v + _index_value(d, Int64)
    return v + int(d) if int(d) else v


def param_by_address(param: Any, dtype: Any, align: int, memspace: str, op: str) -> "AddressEngine":
    """A kernel argument's memory read as dtype through its address (a recast argument: frontend/engines.py):
    the argument's address in an Int64 register (ParamAddress), the engine over it."""
    from ...numeric import Int64

    t = current(op)
    at = user_location()
    dst = t.new_reg(Int64, 1)
    param.read = param.written = True
    t.emit(ParamAddress(dst, param, 0, 0, f" (at {at})" if at else ""))
    return AddressEngine((dst, 0), dtype, align, memspace)


def check_address(value: Any, what: str) -> Any:
    """The register element of a runtime address: one Int64 or Uint64 (refused otherwise)."""
    refs = getattr(value, "refs", None)
    dt = getattr(value, "dtype", None)
    if refs is None or len(refs) != 1 or dt is None or not dt.is_integer or dt.width != 64:
        raise TraceError(f"{what}: a runtime address is one 64-bit integer (Int64 or Uint64), got "
                         f"{getattr(dt, 'name', type(value).__name__)} x {len(refs) if refs is not None else '?'}")
    return refs[0]


# --------------------------------------------------------------------------- the pointer


class AddressEngine(PointerInfo):
    """Global memory at the byte address held in register element ``addr`` (an Int64), read as
    ``dtype``; ``align``: the bytes of alignment the program asserted (assumed_align)."""

    memspace = "gmem"

    def __init__(self, addr: Any, dtype: Any, align: int, memspace: str = "gmem"):
        self.addr, self.dtype, self.align = addr, dtype, align
        self.memspace = memspace
        self.address = 0  # printing only: the address is known when the kernel runs

    def __len__(self) -> int:
        return 1 << 40  # unknown: every access is checked when it runs (address_access.resolve)

    def alignment(self, offset: Any) -> int:
        b = self.dtype.bytes
        d = sym_div(offset) if is_sym(offset) else int(offset) if isinstance(offset, (int, np.integer)) else 1
        if d == 0:
            return self.align
        return max(min(self.align, (d * b) & -(d * b)), b)

    def raw_ptr_str(self, offset: Any) -> str:
        return f"raw_ptr(?: {self.dtype.name}, {self.memspace}, align<{self.alignment(offset)}>)"

    def _access(self, offset: Any, offs: Any, dst: Any = None, src: Any = None) -> None:
        t = current("an access through a runtime address")
        addr = self.addr
        if isinstance(offset, TraceValue):  # an offset computed in registers (a runtime layout's): move the address
            moved = self.address_of(offset)
            t.check_refs(moved.refs, "an access through a runtime address")
            addr, offset = moved.refs[0], 0
        t.check_index(offset, "load" if dst is not None else "store")
        at = user_location()
        t.emit(AddressAccessOp(addr, offset, tuple(int(o) for o in offs), self.dtype, dst, src,
                               f" (at {at})" if at else ""))

    def load(self, offset: Any, layout: Layout) -> TraceValue:
        offs = _static_offsets(layout, "load")
        dst = current("loading from a tensor").new_reg(self.dtype, len(offs))
        self._access(offset, offs, dst=dst)
        return TraceValue([(dst, i) for i in range(len(offs))], layout.shape, self.dtype)

    def store(self, offset: Any, layout: Layout, value: Any) -> None:
        offs = _static_offsets(layout, "store")
        refs = _refs_of(value, len(offs), self.dtype, "store", f"a tensor at a runtime address of layout {layout}")
        self._access(offset, offs, src=refs)

    def read_one(self, off: Any) -> TraceValue:
        dst = current("reading a tensor element").new_reg(self.dtype, 1)
        self._access(off, (0,), dst=dst)
        return TraceValue([(dst, 0)], (), self.dtype)

    def write_one(self, off: Any, v: Any) -> None:
        self._access(off, (0,), src=_refs_of(v, 1, self.dtype, "store", "an element at a runtime address"))

    def address_of(self, offset: Any) -> TraceValue:
        """The byte address of the element at offset, as an Int64 value (``ptr.toint()``)."""
        from ...numeric import Int64

        a = TraceValue([self.addr], (), Int64)
        if isinstance(offset, (int, np.integer)) and int(offset) == 0:
            return a
        if isinstance(offset, TraceValue):
            off = offset.to(Int64) if offset.dtype.name != "Int64" else offset
        else:
            from ..frontend.trace import _index_value

            off = _index_value(offset, Int64) if is_sym(offset) else int(offset)
        return a + off * self.dtype.bytes

    @classmethod
    def make_fragment(cls, tensor: Any, layout: Layout, dtype: Any = None) -> tuple:
        from ..frontend.engines import RmemEngine

        return RmemEngine.make_fragment(tensor, layout, dtype)


def runtime_pointer(dtype: Any, value: Any, mem_space: Any, assumed_align: Any) -> Any:
    """The tracing hook behind ``make_ptr(dtype, value, ...)`` when value is a kernel's runtime
    integer (tracing.hooks.runtime_pointer): a Pointer over an AddressEngine, or None when value is
    not a traced value (make_ptr goes on as on the host)."""
    if not isinstance(value, TraceValue):
        return None
    what = f"make_ptr({dtype}, <runtime address>) (at {user_location() or 'an unknown line'})"
    space = str(getattr(mem_space, "value", mem_space)).split(".")[-1]
    if space not in ("gmem", "generic"):
        raise TraceError(f"{what}: a pointer into {space} memory from a runtime address is not supported in cutelab "
                         f"(only global memory: its kernels name their shared memory by the arrays they allocate)")
    ref = check_address(value, what)
    current("make_ptr").check_refs([ref], what)
    align = dtype.bytes if assumed_align is None else int(assumed_align)
    if align < 1 or align & (align - 1):
        raise TraceError(f"{what}: assumed_align must be a power of two, got {assumed_align}")
    return Pointer(AddressEngine(ref, dtype, max(align, dtype.bytes), "gmem" if space == "gmem" else "generic"), 0)
