"""The memories of traced tensors: engines that plug a kernel's memory into
``cutelab.tensor.Tensor`` while the kernel is traced.

``GmemEngine`` (a kernel argument's global memory) records loads and stores as IR;
``RmemEngine`` (a register fragment) keeps element references at static offsets (a runtime index
selects among them: ``rmem_index``); ``SmemEngine`` is a shared-memory array of the thread block
(its swizzled views are ``smem``'s). ``make_rmem_tensor`` inside a kernel makes an ``RmemEngine``
(through the ``cutelab.tracing`` hook ``rmem_tensor``).
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

import numpy as np

from ... import tracing as _tracing_protocol
from ...errors import TraceError, user_location
from ...layout import Layout
from ...tensor import _RMEM_ALIGN, PointerInfo
from ..ir.fault import Fault
from ..ir.nodes import Assign, Compute, Load, Ref, Reg, Store, _align_of, pow2_divisor
from ..ir.symbolic import depends_note, is_sym, sym_div, sym_range
from .rmem_index import is_runtime_index, read_at, read_block, write_at, write_block
from .trace import TraceValue, Tracer, _refs_of, _static_offsets, active, current, tracing

__all__ = ["GmemEngine", "GmemRecast", "RmemEngine", "SmemEngine"]



class UndefinedValue(TraceValue):
    """The value of a register read past its fragment's end inside a runtime branch (see
    kernel/ir/fault.py): taking its registers (any use but a store of it to memory) places a Fault there."""

    __slots__ = ("_refs", "what")

    def __init__(self, refs: Any, dtype: Any, what: str) -> None:
        self.what = what
        super().__init__(refs, (), dtype)

    @property
    def refs(self) -> tuple:
        current(self.what).emit(Fault(self.what))
        return self._refs

    @refs.setter
    def refs(self, value: tuple) -> None:
        self._refs = value

class GmemEngine(PointerInfo):
    """A kernel argument's global memory (or, as SmemEngine, a shared array) inside a trace:
    loads and stores become IR."""

    memspace = "gmem"
    # a TMA tensor's coordinate view (make_tiled_tma_atom's tensor; the launch marks it): (origin, stride of each
    # TMA dimension), and tensor.iterator over it is its coordinates (tma_coords.py)
    tma_dims: Any = None

    def __init__(self, param: Any, address: int = 0, memspace: str = ""):
        self.param = param
        self.address = address  # the real address, for printing only
        if memspace:  # as the host tensor printed it: CuTe DSL keeps 'generic' for host (numpy) memory
            self.memspace = memspace

    @property
    def dtype(self) -> Any:
        return self.param.dtype

    def iterator_at(self, offset: Any) -> Any:
        """``tensor.iterator`` of a tensor over this memory at ``offset``: a pointer, or a TMA tensor's
        coordinates (CuTe DSL's iterator of the tensor make_tiled_tma_atom returns)."""
        if self.tma_dims is None:
            from ...tensor import Pointer

            return Pointer(self, offset)
        from .tma_coords import tma_iterator

        return tma_iterator(self, offset)

    @property
    def align(self) -> int:
        return self.param.align

    def __len__(self) -> int:
        return self.param.length

    def alignment(self, offset: Any) -> int:
        return _align_of(self.param.align, self.dtype.bytes, offset)

    def raw_ptr_str(self, offset: Any) -> str:
        return f"raw_ptr(?: {self.dtype.name}, {self.memspace}, align<{self.alignment(offset)}>)"

    def load(self, offset: Any, layout: Layout) -> TraceValue:
        t = current("loading from a tensor")
        t.check_index(offset, "load")
        offs = _static_offsets(layout, "load")
        dst = t.new_reg(self.dtype, len(offs))
        self.param.read = True
        t.emit(Load(dst, self.param, offset, tuple(int(o) for o in offs)))
        return TraceValue([(dst, i) for i in range(len(offs))], layout.shape, self.dtype)

    def store(self, offset: Any, layout: Layout, value: Any) -> None:
        t = current("storing to a tensor")
        t.check_index(offset, "store")
        offs = _static_offsets(layout, "store")
        refs = _refs_of(value, len(offs), self.dtype, "store", f"a {self.param.name} tensor of layout {layout}")
        self.param.written = True
        t.emit(Store(self.param, offset, tuple(int(o) for o in offs), refs))

    def read_one(self, off: Any) -> TraceValue:
        t = current("reading a tensor element")
        t.check_index(off, "read")
        dst = t.new_reg(self.dtype, 1)
        self.param.read = True
        t.emit(Load(dst, self.param, off, (0,)))
        return TraceValue([(dst, 0)], (), self.dtype)

    def write_one(self, off: Any, v: Any) -> None:
        t = current("writing a tensor element")
        t.check_index(off, "write")
        if isinstance(v, UndefinedValue):  # as CuTe DSL's compiled kernel: no store (kernel.ir.fault)
            return
        refs = _refs_of(v, 1, self.dtype, "store", f"an element of {self.param.name}")
        self.param.written = True
        t.emit(Store(self.param, off, (0,), refs))

    @classmethod
    def make_fragment(cls, tensor: Any, layout: Layout, dtype: Any = None) -> tuple:
        return RmemEngine.make_fragment(tensor, layout, dtype)

    def recast(self, offset: Any, dtype: Any) -> tuple:
        """``cute.recast_ptr`` of a pointer into this argument: (engine, offset) of the same bytes read as
        dtype, a GmemRecast (it prints and may be sliced, partitioned and recast back; its elements are
        not read or written in the kernel)."""
        if dtype.name == self.dtype.name:
            return self, offset
        return GmemRecast(self, dtype).at(offset)


class GmemRecast(PointerInfo):
    """A kernel argument's global memory read as another element type (``cute.recast_tensor`` /
    ``recast_ptr`` inside the kernel): its pointer and layout print as CuTe DSL's, and recasting it back
    to the argument's own type gives the argument. Loading or storing its elements is a TraceError
    naming the recast: cutelab's kernels access an argument as its own element type (recast the tensor
    on the host, before the launch, to access it as another)."""

    memspace = "gmem"

    def __init__(self, base: GmemEngine, dtype: Any):
        self.base, self._dtype = base, dtype
        self.address = base.address
        if getattr(base, "memspace", "gmem") != "gmem":
            self.memspace = base.memspace

    @property
    def dtype(self) -> Any:
        return self._dtype

    @property
    def align(self) -> int:
        return self.base.align

    def __len__(self) -> int:
        return len(self.base) * self.base.dtype.width // self._dtype.width

    def _convert(self, offset: Any, frm: Any, to: Any) -> Any:
        """An element offset in frm elements as one in to elements (the same bit)."""
        bits = offset * frm.width
        if (sym_div(bits) if is_sym(bits) else int(bits)) % to.width:
            raise TraceError(f"recast_ptr({self.base.ptr_str(0)} at element {offset}, dtype={to}): the pointer is "
                             f"not at a whole {to} element")
        return bits // to.width

    def at(self, offset: Any) -> tuple:
        return self, self._convert(offset, self.base.dtype, self._dtype)

    def recast(self, offset: Any, dtype: Any) -> tuple:
        if dtype.name == self.base.dtype.name:
            return self.base, self._convert(offset, self._dtype, dtype)
        if dtype.name == self._dtype.name:
            return self, offset
        return GmemRecast(self.base, dtype).at(self._convert(offset, self._dtype, self.base.dtype))

    def alignment(self, offset: Any) -> int:
        w = self._dtype.width
        if w >= 8:
            return _align_of(self.base.align, w // 8, offset)
        d = sym_div(offset)  # what divides the element offset (0: it is 0)
        if d == 0:
            return self.base.align
        return max(min(self.base.align, pow2_divisor(d * w // 8)), 1) if (d * w) % 8 == 0 else 1

    def raw_ptr_str(self, offset: Any) -> str:
        return f"raw_ptr(?: {self._dtype.name}, {self.memspace}, align<{self.alignment(offset)}>)"

    def _refuse(self, op: str) -> Any:
        raise TraceError(f"kernel {current(op).name}: {op} of {self.base.param.name} recast from {self.base.dtype} to "
                         f"{self._dtype} in the kernel: cutelab's kernels read and write a recast argument through "
                         f"its address as whole-byte elements of global memory only; recast the tensor before the "
                         f"launch (cute.recast_tensor in the jit function) or pass it with that type (used at "
                         f"{user_location()})")

    def _by_address(self, op: str) -> Any:
        """The argument's memory read as this type through its address (kernel/instr/address_access.py: the
        interpreter finds the argument's bytes; CUDA reads through a cast pointer), as CuTe DSL's recast pointer
        reads it (CUTLASS's MoE kernels keep Int32 offsets in a byte workspace)."""
        if self._dtype.width < 8 or self.base.dtype.width < 8 or isinstance(self.base, SmemEngine) or \
                str(self.memspace) not in ("gmem", "generic"):
            self._refuse(op)
        # instr/address_access.param_by_address, through the tracing hook (the instructions build on the engines)
        return _tracing_protocol.hooks.param_by_address(self.base.param, self._dtype, self.base.align,
                                                        str(self.memspace), op)

    def load(self, offset: Any, layout: Layout) -> Any:
        return self._by_address("load").load(offset, layout)

    def store(self, offset: Any, layout: Layout, value: Any) -> None:
        self._by_address("store").store(offset, layout, value)

    def read_one(self, off: Any) -> Any:
        return self._by_address("read").read_one(off)

    def write_one(self, off: Any, v: Any) -> None:
        self._by_address("write").write_one(off, v)

    @classmethod
    def make_fragment(cls, tensor: Any, layout: Layout, dtype: Any = None) -> tuple:
        return RmemEngine.make_fragment(tensor, layout, dtype)


_UNSET = 0  # registers that were never written read as 0


class RmemEngine(PointerInfo):
    """A register fragment inside a trace: element references at static offsets."""

    memspace = "rmem"
    align = _RMEM_ALIGN  # 32, as CuTe DSL 4.8.1 allocates register tensors (make_rmem_tensor prints align<32>);
    # MMA fragments set their own (nvgpu.mma_atom: 16, or their mode 0's bytes)

    def __init__(self, dtype: Any, n: int):
        self.dtype = dtype
        self.slots: List[Ref] = [_UNSET] * n
        self.reg: Optional[Reg] = None  # set when the fragment became a mutable register array
        t = active()
        self.block = t.cur if t is not None else None
        if t is not None:
            t.fragments.append(self)

    def make_mutable(self, t: "Tracer", before_region: bool = False) -> None:
        """Keep the fragment in a mutable register array, so writes inside loops and branches are
        seen by later iterations and after the region. Called before a loop is entered, or at the
        first write inside a branch (before_region: the current values are assigned just before
        the region op of the fragment's block that is being traced)."""
        if self.reg is not None or self.block is None or not self.block.encloses(t.cur):
            return
        self.reg = t.new_reg(self.dtype, len(self.slots), mutable=True)
        idx = [i for i, r in enumerate(self.slots) if not (isinstance(r, int) and r is _UNSET)]
        if idx:
            a = Assign(self.reg, tuple(idx), tuple(self.slots[i] for i in idx))
            if before_region:
                self.block.ops.insert(len(self.block.ops) - 1, a)
            else:
                t.emit(a)

    def _get(self, offs: Sequence[int], shape: Any) -> TraceValue:
        if self.reg is None:
            return TraceValue([self.slots[int(o)] for o in offs], shape, self.dtype)
        t = current("reading a register fragment")
        dst = t.new_reg(self.dtype, len(offs))
        t.emit(Compute(dst, "mov", (tuple((self.reg, int(o)) for o in offs),)))
        return TraceValue([(dst, i) for i in range(len(offs))], shape, self.dtype)

    def _put(self, offs: Sequence[int], refs: Sequence[Ref]) -> None:
        t = active()
        if self.reg is None and t is not None and self.block is not None and t.cur is not self.block:
            self.make_mutable(t, before_region=True)
        if self.reg is None:
            for o, r in zip(offs, refs):
                self.slots[int(o)] = r
            return
        current("writing a register fragment").emit(Assign(self.reg, tuple(int(o) for o in offs), tuple(refs)))

    def __len__(self) -> int:
        return len(self.slots)

    def recast(self, offset: Any, dtype: Any) -> tuple:
        """``cute.recast_ptr`` of a pointer into this fragment: (engine, offset) of its registers' bits read
        as dtype (kernel.instr.rmem_view, reached through the kernel's instruction hook)."""
        return _tracing_protocol.instruction("rmem.recast")(self, offset, dtype)

    def alignment(self, offset: Any) -> int:
        return _align_of(self.align, self.dtype.bytes, offset)

    def raw_ptr_str(self, offset: Any) -> str:
        return f"raw_ptr(0x{0:016x}: {self.dtype.name}, rmem, align<{self.alignment(offset)}>)"

    def _static(self, offset: Any, op: str) -> int:
        if is_sym(offset):
            lo, hi = sym_range(offset)
            if lo != hi:
                at = user_location()
                raise TraceError(
                    f"{op}{f' at {at}' if at else ''}: a register fragment at a runtime offset is supported by "
                    f"element reads and writes and by a slice's load() and store(), not here (registers have no "
                    f"addresses in cutelab); the offset {offset.expr_str()} takes values {lo}..{hi} at run time "
                    f"and depends on {depends_note(offset)} (cutlass.range_constexpr unrolls a loop at trace time)"
                )
            offset = lo
        return int(offset)

    def _offsets(self, offset: Any, layout: Layout, op: str) -> np.ndarray:
        base = self._static(offset, op)
        offs = _static_offsets(layout, op) + base
        if len(offs) and (offs.min() < 0 or offs.max() >= len(self.slots)):
            raise TraceError(
                f"{op}: layout {layout} at offset {base} reaches [{int(offs.min())}, {int(offs.max())}], "
                f"outside the fragment of {len(self.slots)} registers"
            )
        return offs

    def load(self, offset: Any, layout: Layout) -> TraceValue:
        if is_runtime_index(offset):  # a slice at a runtime loop's index (frag[(None, s)].load()): rmem_index
            return read_block(self, offset, _static_offsets(layout, "load"), layout.shape, "load")
        offs = self._offsets(offset, layout, "load")
        return self._get(offs, layout.shape)

    def store(self, offset: Any, layout: Layout, value: Any) -> None:
        if is_runtime_index(offset):
            offs = _static_offsets(layout, "store")
            refs = _refs_of(value, len(offs), self.dtype, "store", f"a register fragment of layout {layout}")
            return write_block(self, offset, offs, refs, "store")
        offs = self._offsets(offset, layout, "store")
        refs = _refs_of(value, len(offs), self.dtype, "store", f"a register fragment of layout {layout}")
        self._put(offs, refs)

    def read_one(self, off: Any) -> TraceValue:
        if is_runtime_index(off):  # frag[i], i known when the kernel runs
            return read_at(self, off)
        o = self._static(off, "read")
        if not 0 <= o < len(self.slots):
            t = active()
            what = f"read: offset {o} is outside the fragment of {len(self.slots)} registers"
            if t is None or t.cur is t.body:
                raise TraceError(what)
            # inside a runtime branch or loop CuTe DSL compiles it (undefined on the GPU): an error only
            # if a thread uses it, and a store of it to memory is dropped (kernel.ir.fault)
            return UndefinedValue([0], self.dtype, what)
        return self._get([o], ())

    def write_one(self, off: Any, v: Any) -> None:
        if is_runtime_index(off):
            return write_at(self, off, _refs_of(v, 1, self.dtype, "store", "a register")[0])
        o = self._static(off, "write")
        if not 0 <= o < len(self.slots):
            raise TraceError(f"write: offset {o} is outside the fragment of {len(self.slots)} registers")
        self._put([o], [_refs_of(v, 1, self.dtype, "store", "a register")[0]])

    @classmethod
    def make_fragment(cls, tensor: Any, layout: Layout, dtype: Any = None) -> tuple:
        dtype = dtype or tensor.element_type
        offs = _static_offsets(layout, "make_fragment_like")
        n = int(offs.max()) + 1 if len(offs) else 1
        return cls(dtype, n), 0


def _address_offset(a: Any) -> Any:
    """The element offset of a PointerInt (pointer + byte offset) into its pointer's memory."""
    b = a.ptr.engine.dtype.bytes
    d = a.delta
    if (sym_div(d) if is_sym(d) else int(d) if isinstance(d, (int, np.integer)) else 1) % b:
        raise TraceError(f"{a.ptr}.toint() + {d}: the address is not at a whole {b}-byte element")
    return a.ptr.offset + (d // b if is_sym(d) or isinstance(d, (int, np.integer)) else d)


class SmemEngine(GmemEngine):
    """A shared-memory array of the thread block inside a trace."""

    memspace = "smem"

    def address_value(self, a: Any) -> Any:
        """``ptr.toint().ir_value()`` of a pointer into this array (a core ``PointerInt`` ``a``): its
        shared-memory address as an inline-PTX operand (frontend.shared_address.SharedAddress)."""
        from ...tensor import Pointer
        from .shared_address import SharedAddress

        if type(self) is not SmemEngine:
            raise TraceError(f"{a.ptr}.toint().ir_value(): the address of swizzled shared memory as an inline-PTX "
                             f"operand is not supported")
        return SharedAddress(Pointer(self, _address_offset(a)))

    def recast(self, offset: Any, dtype: Any) -> tuple:
        """``cute.recast_ptr`` of a pointer into this array at offset: (engine, offset) of the same
        bytes read as dtype (an ir.nodes.SharedAlias of the array, made once per element type)."""
        from ..ir.nodes import SharedAlias

        sh = self.param
        root = getattr(sh, "base", sh)
        what = f"recast_ptr({self.ptr_str(offset)}, dtype={dtype})"
        if getattr(self, "ptr_swizzle", None) is not None:
            # a swizzled pointer (get_tensor(..., swizzle=S)): CuTe DSL's recast_ptr(ptr, swizzle_=None, ...) gives
            # a plain pointer at the same address (quack's as_position_independent_swizzle_tensor relies on it)
            return SmemEngine(self.param).recast(offset, dtype)
        if type(self) is not SmemEngine:
            if dtype.name == self.dtype.name:  # the same element type: the same (swizzled) pointer
                return self, offset
            raise TraceError(f"{what}: recasting a pointer into swizzled shared memory to another element type "
                             f"is not supported (used at {user_location()})")
        nbytes = offset * sh.dtype.bytes
        if (sym_div(nbytes) if is_sym(nbytes) else int(nbytes)) % dtype.bytes:
            raise TraceError(f"{what}: the pointer's byte offset is not a multiple of {dtype}'s {dtype.bytes} bytes")
        if (root.length * root.dtype.bytes) % dtype.bytes:
            raise TraceError(f"{what}: the shared array of {root.length * root.dtype.bytes} bytes is not a whole "
                             f"number of {dtype} elements")
        if dtype.name == root.dtype.name:
            target = root
        else:
            aliases = root.__dict__.setdefault("aliases", {})
            target = aliases.get(dtype.name)
            if target is None:
                t = current("recast_ptr")
                target = SharedAlias(len(t.shared), t._unique(f"{root.name}_{dtype.name}"), dtype, root)
                t.shared.append(target)
                aliases[dtype.name] = target
        return SmemEngine(target), nbytes // dtype.bytes


def _rmem_in_trace(layout: Layout, dtype: Any) -> Any:
    """make_rmem_tensor inside a traced kernel: a register fragment (None outside a trace)."""
    if not tracing():
        return None
    from ...tensor import Tensor

    eng, off = RmemEngine.make_fragment(None, layout, dtype)
    return Tensor(eng, layout, off, _checked=True)


_tracing_protocol.install(rmem_tensor=_rmem_in_trace)
