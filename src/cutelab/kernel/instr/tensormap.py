"""TMA descriptors that the kernel keeps in memory and rewrites: CuTe DSL's ``cpasync.copy_tensormap``,
``update_tma_descriptor``, their fences, TMA copies through a descriptor pointer
(``cute.copy(..., tma_desc_ptr=p)``), and ``prefetch_descriptor`` (``prefetch.tensormap`` of a descriptor
kernel parameter, a cache hint).

A grouped GEMM copies each TMA atom's descriptor into a workspace in global (or shared) memory,
rewrites its tensor address, extents and strides for each group, and issues its TMA copies through
the rewritten descriptor.

- CUDA: ``copy_tensormap`` copies the atom's 128-byte ``CUtensorMap`` kernel parameter into memory;
  ``update_tma_descriptor`` is ``tensormap.replace.tile.{global_address,global_dim,global_stride}``
  (``.global`` or ``.shared::cta``) on it; the fences are ``fence.proxy.tensormap::generic.release.gpu``,
  ``fence.proxy.tensormap::generic.acquire.gpu [p], 128`` and
  ``tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned``; a copy
  through a descriptor pointer is the TMA instruction with the pointer's address in place of the
  kernel parameter's.
- CPU: the 128 bytes hold cutelab's own image of the descriptor (``encode``: a tag, the atom's static
  part (box, swizzle, element type: kept in a table of this module), the tensor's address, extents
  and byte strides); ``copy_tensormap`` writes it, ``update_tma_descriptor`` rewrites its fields in
  memory, a copy through the pointer reads it when it runs and moves the box from the memory the
  address names (kernel/instr/address_access.py finds it). So a TMA through a descriptor the kernel
  rewrote uses the rewritten fields, and bytes copied elsewhere (to shared memory and back) stay a
  descriptor. Reading a descriptor where none was written (no tag) is a LaunchError naming the op
  and line. The interpreter's memory is coherent, but the tensormap proxy's order is checked (``_Fences``): a
  TMA through a descriptor written in the same launch needs the writer's release and its own thread's acquire
  after the write, else it is a LaunchError naming both lines.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np

from ...errors import LaunchError, TraceError, user_location
from ..frontend.engines import GmemEngine, SmemEngine
from ..frontend.trace import TraceValue, current
from ..ir.nodes import Access, Op, Shared
from ..ir.symbolic import is_sym
from .address_access import AddressEngine, resolve
from .mbarrier import complete_tx, smem_addr
from .tma import TENSORMAP_STRUCT, TmaLoadOp, coord_code, coord_values

__all__ = ["DescLoc", "desc_loc", "TensorMapCopyOp", "TensorMapUpdateOp", "TensorMapFenceOp", "TmaLoadViaDescOp",
           "TmaStoreViaDescOp", "encode", "decode", "copy_tensormap", "update_tma_descriptor", "fence_tma_desc_acquire",
           "fence_tma_desc_release", "cp_fence_tma_desc_release", "nvvm_tma_load"]

_TAG = 0x50414D544C43  # "CLTMAP"
_WORDS = 16
_STATIC: List[Any] = []  # the static parts (TmaDescriptor: box, swizzle, element type) images refer to
_STATIC_ID: Dict[Any, int] = {}


_FAULT = 13  # the image's word naming a field TMA cannot use (1 + its index in _FAULTS), 0 for none
_FAULTS: List[str] = []
_FAULT_ID: Dict[str, int] = {}


def _fault_id(msg: str) -> int:
    k = _FAULT_ID.get(msg)
    if k is None:
        k = _FAULT_ID[msg] = len(_FAULTS) + 1
        _FAULTS.append(msg)
    return k


def _static_id(desc: Any) -> int:
    k = _STATIC_ID.get(desc)
    if k is None:
        k = _STATIC_ID[desc] = len(_STATIC)
        _STATIC.append(desc)
    return k


def encode(desc: Any, address: int, dims: Any = None, strides: Any = None) -> np.ndarray:
    """The CPU image (16 uint64 words) of desc for a tensor at address (extents and byte strides
    innermost first; the atom's by default)."""
    w = np.zeros(_WORDS, dtype=np.uint64)
    dims = desc.dims if dims is None else dims
    strides = desc.strides if strides is None else strides
    w[0] = (_TAG << 8) | desc.rank
    w[1] = _static_id(desc)
    w[2] = np.uint64(int(address) & ((1 << 64) - 1))
    for k in range(desc.rank):
        w[3 + k] = int(dims[k])
        w[8 + k] = int(strides[k])
    return w


def decode(w: np.ndarray, what: str, usable: bool = True) -> Tuple[Any, int, List[int], List[int]]:
    """(static descriptor, address, extents, byte strides) of an image; refuses bytes that are not one, and
    (``usable``, for a TMA) one with a field TMA cannot use."""
    if int(w[0]) >> 8 != _TAG or int(w[1]) >= len(_STATIC):
        raise LaunchError(f"{what}: the 128 bytes at the descriptor pointer hold no TMA descriptor (copy one there "
                          f"with cpasync.copy_tensormap / TensorMapManager.init_tensormap_from_atom first)")
    f = int(w[_FAULT])
    if f and usable:
        raise LaunchError(f"{what}: the descriptor cannot be used: {_FAULTS[f - 1] if f <= len(_FAULTS) else '?'}")
    desc = _STATIC[int(w[1])]
    r = desc.rank
    return desc, int(w[2]), [int(x) for x in w[3:3 + r]], [int(x) for x in w[8:8 + r]]


# --------------------------------------------------------------------------- where a descriptor lives

class DescLoc:
    """128 bytes of global memory (a kernel argument's, at word offset ``base``) or of a shared
    array, where a descriptor is kept; ``mem`` is the Param or Shared (of 64-bit words)."""

    __slots__ = ("mem", "base")

    def __init__(self, mem: Any, base: Any):
        self.mem, self.base = mem, base

    @property
    def shared(self) -> bool:
        return isinstance(self.mem, Shared)

    @property
    def unit(self) -> int:
        """Bytes per element of the memory the base counts in (a kernel argument of bytes, as CUTLASS's MoE
        workspace is, or of 64-bit words)."""
        return 8 if self.shared else max(1, self.mem.dtype.width // 8)

    def access(self, op: Any, store: bool) -> Access:
        return Access(self.mem, self.base, tuple(range(_WORDS * 8 // self.unit)), store, op)

    def _rows(self, b: Any, buffers: Any, act: np.ndarray, what: str) -> Tuple[np.ndarray, np.ndarray]:
        base = np.broadcast_to(np.asarray(b.index(self.base), dtype=np.int64), (b.n,))[act]
        if self.shared:
            data = b.shared[self.mem.index].view(np.uint64)
            base = base + b.block_of[act] * self.mem.length
            lo, hi = b.block_of[act] * self.mem.length, (b.block_of[act] + 1) * self.mem.length
        else:
            u = self.unit
            if act.size and (base * u % 8).any():
                raise LaunchError(f"{what}: the descriptor at byte {int(base[(base * u % 8) != 0][0] * u)} of "
                                  f"{self.mem.name} is not 8-byte aligned (TMA descriptors are 64-byte aligned)")
            base = base * u // 8
            data = buffers[self.mem.index].view(np.uint64)
            lo, hi = 0, len(data)
        if act.size and ((base < lo) | (base + _WORDS > hi)).any():
            raise LaunchError(f"{what}: the 128-byte descriptor at word {int(base[0])} of {self.mem.name} runs outside "
                              f"its {hi} 8-byte words")
        return data, base[:, None] + np.arange(_WORDS)[None, :]

    def read(self, b: Any, buffers: Any, act: np.ndarray, what: str) -> np.ndarray:
        data, idx = self._rows(b, buffers, act, what)
        return data[idx]

    def write(self, b: Any, buffers: Any, act: np.ndarray, words: np.ndarray, what: str,
              released: bool = False) -> None:
        """Write the descriptors; the write is a generic-proxy one (``released``: released as it is, as
        tensormap.cp_fenceproxy's), which a TMA through them in this launch must see ordered (_Fences)."""
        data, idx = self._rows(b, buffers, act, what)
        data[idx] = words
        _Fences.of(b).wrote(self._keys(idx), act, what, released)

    def _keys(self, idx: np.ndarray) -> List[Tuple[Any, ...]]:
        return [(self.shared, self.mem.index, int(w)) for w in idx[:, 0]]

    def keys(self, b: Any, buffers: Any, act: np.ndarray, what: str) -> List[Tuple[Any, ...]]:
        return self._keys(self._rows(b, buffers, act, what)[1])


    def cuda_addr(self, r: Any) -> Tuple[str, str]:
        """(C expression, PTX state space) of the descriptor's address: a generic 64-bit address of
        global memory, or a shared-window address."""
        code = r.expr(self.base)[0] if is_sym(self.base) else str(int(self.base))
        if self.shared:
            return f"(unsigned long long){smem_addr(r, self.mem, self.base)}", ".shared::cta"
        return f"(unsigned long long)({self.mem.name} + {code})", ".global"


class _Fences:
    """The tensormap proxy's ordering in one batch of blocks: a descriptor written in memory by the generic proxy
    (copy_tensormap, update_tma_descriptor) reaches a TMA of this launch only through a release by the writer
    (fence.proxy.tensormap::generic.release, cpasync.fence_tma_desc_release; tensormap.cp_fenceproxy releases its
    copy) and an acquire of its address by the TMA's thread (fence_tma_desc_acquire) after it. A TMA without
    them is refused, naming both lines; a descriptor written before the launch (another kernel's) needs none."""

    def __init__(self) -> None:
        self.clock = 0
        self.writes: Dict[Any, Tuple[int, int, str]] = {}  # key -> (time, writing thread, what)
        self.released: Dict[int, int] = {}  # thread -> time of its last release fence
        self.acquired: Dict[Tuple[Any, int], int] = {}  # (key, thread) -> time of its acquire

    @staticmethod
    def of(b: Any) -> "_Fences":
        f = b.common.get("tensormap_fences")
        if f is None:
            f = b.common["tensormap_fences"] = _Fences()
        return f

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    def wrote(self, keys: List[Any], act: np.ndarray, what: str, released: bool) -> None:
        now = self.tick()
        for k, t in zip(keys, act):
            self.writes[k] = (now, int(t), what)
            if released:
                self.released[int(t)] = now

    def release(self, act: np.ndarray) -> None:
        now = self.tick()
        for t in act:
            self.released[int(t)] = now

    def acquire(self, keys: List[Any], act: np.ndarray) -> None:
        now = self.tick()
        for k, t in zip(keys, act):
            self.acquired[(k, int(t))] = now

    def check(self, key: Any, t: int, what: str) -> None:
        w = self.writes.get(key)
        if w is None:
            return
        when, writer, wrote = w
        if self.released.get(writer, 0) < when:
            raise LaunchError(f"{what}: the descriptor was written in this launch ({wrote}) and not released to the "
                              f"tensormap proxy after it (cpasync.fence_tma_desc_release: fence.proxy.tensormap::"
                              f"generic.release)")
        if self.acquired.get((key, t), 0) < when:
            raise LaunchError(f"{what}: the descriptor was written in this launch ({wrote}) and this thread did not "
                              f"acquire it after that (cpasync.fence_tma_desc_acquire of its address: "
                              f"fence.proxy.tensormap::generic.acquire)")


def desc_loc(ptr: Any, what: str) -> DescLoc:
    """Where a descriptor pointer points: a pointer (or tensor) of 64-bit words in a kernel
    argument's global memory or in shared memory (a cute.struct field's data_ptr())."""
    from ...tensor import Pointer, Tensor
    from ..frontend.smem import SmemPtr
    from .mbarrier import mbar_ref

    t = current(what)
    if isinstance(ptr, SmemPtr):
        sh, off = mbar_ref(ptr, what)
        return DescLoc(sh, off)
    eng, off = (ptr.engine, ptr.offset) if isinstance(ptr, (Pointer, Tensor)) else (None, None)
    eng = getattr(eng, "tensormap_of", eng)  # TensorMapManager.get_tensormap_ptr's view: the memory itself
    if isinstance(eng, AddressEngine):
        raise TraceError(f"{what}: a descriptor at a runtime address is not supported in cutelab; keep descriptors in "
                         f"a kernel argument's memory or in shared memory (at {user_location()})")
    if not isinstance(eng, GmemEngine):
        raise TraceError(f"{what}: expected a pointer into global or shared memory holding a TMA descriptor, got "
                         f"{type(ptr).__name__} (at {user_location()})")
    if eng.dtype.width not in (8, 16, 32, 64) or not eng.dtype.is_integer:
        raise TraceError(f"{what}: the descriptor pointer must point to integers (an Int64 or Uint8 workspace, as "
                         f"CuTe DSL's examples allocate), got {eng.dtype} (at {user_location()})")
    if is_sym(off):
        t.check_index(off, what)
    elif not isinstance(off, (int, np.integer)):
        raise TraceError(f"{what}: the descriptor pointer's offset must be an index expression (at {user_location()})")
    if isinstance(eng, SmemEngine):
        return DescLoc(eng.param, off)
    eng.param.read = eng.param.written = True  # descriptors are written there (copy, update): no const, no __ldg
    return DescLoc(eng.param, off)


# --------------------------------------------------------------------------- copy, update, fences

class TensorMapCopyOp(Op):
    """``copy_tensormap(atom, p)``: the atom's descriptor (for its tensor ``param``) into memory at loc."""

    __slots__ = ("desc", "param", "dloc", "tmap_name", "where")

    def __init__(self, desc: Any, param: Any, loc: DescLoc, where: str):
        self.desc, self.param, self.dloc, self.where = desc, param, loc, where
        self.tmap_name = f"tmap_{param.name}"

    def __repr__(self) -> str:
        return f"copy_tensormap {self.tmap_name} -> {self.dloc.mem.name}[{self.dloc.base}]"

    def accesses(self) -> List[Access]:
        return [self.dloc.access(self, True)]

    def kernel_params(self) -> List[Tuple[str, str]]:
        return [(TENSORMAP_STRUCT, f"const __grid_constant__ cl_tensormap {self.tmap_name}")]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        if act.size == 0:
            return
        addr = int((getattr(b, "addresses", None) or {}).get(self.param.index, 0))
        img = encode(self.desc, addr)
        self.dloc.write(b, buffers, act, np.broadcast_to(img, (act.size, _WORDS)), f"{b.ir.name}{self.where}: copy_tensormap")

    def cuda(self, r: Any) -> None:
        a, ss = self.dloc.cuda_addr(r)
        with r.braces():
            r.emit(f"const unsigned long long* cl_ts = (const unsigned long long*)&{self.tmap_name};")
            r.emit(f"unsigned long long cl_ta = {a};")
            r.emit("#pragma unroll")
            r.emit("for (int cl_i = 0; cl_i < 16; ++cl_i)")
            with r.indented():
                if ss == ".global":
                    r.emit("((unsigned long long*)cl_ta)[cl_i] = cl_ts[cl_i];")
                else:
                    r.emit('asm volatile("st.shared.b64 [%0], %1;" :: "r"((unsigned)cl_ta + 8 * cl_i), '
                           '"l"(cl_ts[cl_i]) : "memory");')


class TensorMapUpdateOp(Op):
    """``update_tma_descriptor``: the descriptor at loc gets the tensor's address (``addr``: a register
    element, or (Param, element offset) of a kernel argument), extents and byte strides (per TMA
    dimension, innermost first: ints or register elements)."""

    __slots__ = ("dloc", "addr", "dims", "strides", "eb", "where")

    def __init__(self, loc: DescLoc, addr: Any, dims: Tuple[Any, ...], strides: Tuple[Any, ...], eb: int, where: str):
        self.dloc, self.addr, self.dims, self.strides, self.eb, self.where = loc, addr, dims, strides, eb, where

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        return f"update_tma_descriptor {self.dloc.mem.name}[{_ref_str(self.dloc.base)}]"

    def accesses(self) -> List[Access]:
        return [self.dloc.access(self, False), self.dloc.access(self, True)]

    def _address(self, b: Any, act: np.ndarray) -> np.ndarray:
        from ...numeric import Int64

        if isinstance(self.addr, tuple) and len(self.addr) == 2 and not isinstance(self.addr[0], (Shared,)) \
                and getattr(self.addr[0], "kind", None) == "pointer":
            p, off = self.addr
            base = int((getattr(b, "addresses", None) or {}).get(p.index, 0))
            o = np.broadcast_to(np.asarray(b.index(off), dtype=np.int64), (b.n,))[act]
            return base + o * p.dtype.bytes
        return np.broadcast_to(np.asarray(b.column(self.addr, Int64, real=True), dtype=np.int64), (b.n,))[act]

    def _value(self, b: Any, v: Any, act: np.ndarray) -> np.ndarray:
        from ...numeric import Int64

        if isinstance(v, (int, np.integer)):
            return np.full(act.size, int(v), dtype=np.int64)
        return np.broadcast_to(np.asarray(b.column(v, Int64, real=True), dtype=np.int64), (b.n,))[act]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        if act.size == 0:
            return
        what = f"{b.ir.name}{self.where}: update_tma_descriptor"
        words = self.dloc.read(b, buffers, act, what).copy()
        for i in range(act.size):
            decode(words[i], what, usable=False)  # a descriptor must be there
        words[:, 2] = self._address(b, act).astype(np.uint64)
        # a field TMA cannot use (an extent of 0: CUTLASS's MoE kernels build a descriptor for an expert of no
        # tokens, which no TMA then uses) is written; the descriptor is marked, and a TMA through it refused
        words[:, _FAULT] = 0
        for k, (d, s) in enumerate(zip(self.dims, self.strides)):
            dv, sv = self._value(b, d, act), self._value(b, s, act)
            faults = [((dv < 1) | (dv > 1 << 32), lambda i: f"extent {int(dv[i])} of TMA dimension {k} is not in "
                                                            f"1..2^32"),
                      ((sv % 16 != 0) | (sv < 0) | (sv >= 1 << 40) if k else np.zeros(act.size, bool),
                       lambda i: f"byte stride {int(sv[i])} of TMA dimension {k} is not a multiple of 16 below 2^40, "
                                 f"as TMA requires"),
                      ((sv != self.eb) if k == 0 else np.zeros(act.size, bool),
                       lambda i: f"the innermost TMA dimension must be contiguous, but the tensor's stride there is "
                                 f"{int(sv[i])} bytes")]
            for bad, msg in faults:
                for i in np.nonzero(bad & (words[:, _FAULT] == 0))[0]:
                    words[i, _FAULT] = _fault_id(f"{msg(int(i))} (written by {what})")
            words[:, 3 + k] = dv.astype(np.uint64)
            words[:, 8 + k] = sv.astype(np.uint64)
        self.dloc.write(b, buffers, act, words, what)

    def _code(self, r: Any, v: Any, c: str) -> str:
        from ...numeric import Int64

        if isinstance(v, (int, np.integer)):
            return f"({'unsigned long long' if c == 'l' else 'unsigned'}){int(v)}"
        return f"({'unsigned long long' if c == 'l' else 'unsigned'})({r.value(v, Int64)})"

    def cuda(self, r: Any) -> None:
        from ...numeric import Int64

        a, ss = self.dloc.cuda_addr(r)
        if isinstance(self.addr, tuple) and getattr(self.addr[0], "kind", None) == "pointer":
            p, off = self.addr
            o = r.expr(off)[0] if is_sym(off) else str(int(off))
            ga = f"(unsigned long long)({p.name} + {o})"
        else:
            ga = f"(unsigned long long)({r.value(self.addr, Int64)})"
        with r.braces():
            r.emit(f"unsigned long long cl_td = {a};")
            r.emit(f'asm volatile("tensormap.replace.tile.global_address{ss}.b1024.b64 [%0], %1;" :: "l"(cl_td), '
                   f'"l"({ga}) : "memory");')
            for k, d in enumerate(self.dims):
                r.emit(f'asm volatile("tensormap.replace.tile.global_dim{ss}.b1024.b32 [%0], {k}, %1;" :: "l"(cl_td), '
                       f'"r"({self._code(r, d, "r")}) : "memory");')
            for k, s in enumerate(self.strides[1:]):  # the stride of dimension k + 1, in bytes
                r.emit(f'asm volatile("tensormap.replace.tile.global_stride{ss}.b1024.b64 [%0], {k}, %1;" :: '
                       f'"l"(cl_td), "l"({self._code(r, s, "l")}) : "memory");')


class TensorMapFenceOp(Op):
    """The tensormap proxy fences: ``release`` (fence.proxy.tensormap::generic.release.gpu),
    ``acquire`` of the descriptor at loc (fence.proxy.tensormap::generic.acquire.gpu [p], 128), and
    ``cp_release`` (tensormap.cp_fenceproxy: copy the descriptor at ``src`` (shared) to loc (global)
    and release it). On the CPU they order descriptor writes before TMAs (``_Fences``)."""

    __slots__ = ("kind", "dloc", "src", "where", "scope")

    def __init__(self, kind: str, loc: Any = None, src: Any = None, where: str = "", scope: str = "gpu"):
        self.kind, self.dloc, self.src, self.where, self.scope = kind, loc, src, where, scope

    def __repr__(self) -> str:
        return f"tensormap_fence.{self.kind}"

    def accesses(self) -> List[Access]:
        if self.kind == "cp_release":
            return [self.src.access(self, False), self.dloc.access(self, True)]
        return []

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        if not act.size:
            return None
        what = f"{b.ir.name}{self.where}: {self.kind} fence"
        if self.kind == "release":
            _Fences.of(b).release(act)
        elif self.kind == "acquire":
            _Fences.of(b).acquire(self.dloc.keys(b, buffers, act, what), act)
        else:
            what = f"{b.ir.name}{self.where}: cp_fence_tma_desc_release"
            self.dloc.write(b, buffers, act, self.src.read(b, buffers, act, what), what, released=True)

    def cuda(self, r: Any) -> None:
        if self.kind == "release":
            r.emit(f'asm volatile("fence.proxy.tensormap::generic.release.{self.scope};" ::: "memory");')
        elif self.kind == "acquire":
            a, _ = self.dloc.cuda_addr(r)
            r.emit(f'asm volatile("fence.proxy.tensormap::generic.acquire.{self.scope} [%0], 128;" :: "l"({a}) : '
                   f'"memory");')
        else:
            a, _ = self.dloc.cuda_addr(r)
            s = smem_addr(r, self.src.mem, self.src.base)
            r.emit('asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned '
                   f'[%0], [%1], 128;" :: "l"({a}), "r"({s}) : "memory");')


# --------------------------------------------------------------------------- TMA through a descriptor pointer

def _runtime_box(op: Any, b: Any, buffers: Any, t: int, what: str) -> Tuple[Any, np.ndarray, np.ndarray, Any]:
    """(static descriptor, byte addresses of the box elements of thread t (innermost fastest), whether
    each lies inside the tensor, the memory) from the descriptor in memory."""
    one = np.array([t])
    _Fences.of(b).check(op.dloc.keys(b, buffers, one, what)[0], t, what)
    words = op.dloc.read(b, buffers, one, what)[0]
    desc, addr, dims, strides = decode(words, what)
    d = op.desc if op.desc is not None else desc  # the NVVM form knows only the descriptor in memory
    if len(op.coords) != d.rank:
        raise LaunchError(f"{what}: the copy gives {len(op.coords)} coordinates, the descriptor in memory has rank "
                          f"{d.rank}")
    if (desc.box, desc.swizzle, desc.dtype.name) != (d.box, d.swizzle, d.dtype.name):
        raise LaunchError(f"{what}: the descriptor in memory moves a box {desc.box} of {desc.dtype} (swizzle {desc.swizzle}), "
                          f"the copy's atom one of {d.box} of {d.dtype} (swizzle {d.swizzle})")
    box = np.indices(d.box[::-1]).reshape(d.rank, -1)[::-1]
    valid = np.ones(box.shape[1], dtype=bool)
    byte = np.full(box.shape[1], addr, dtype=np.int64)
    for k in range(d.rank):
        c = int(coord_values(b, op.coords[k])[t])
        g = c + box[k]
        valid &= (g >= 0) & (g < dims[k])
        byte += g * strides[k]
    return d, byte, valid, None


class TmaLoadViaDescOp(TmaLoadOp):
    """A TMA box load through the descriptor in memory at ``dloc`` (not a kernel parameter)."""

    __slots__ = ("dloc",)

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        c = ", ".join(_ref_str(x) for x in self.coords)
        return (f"tma_load {self.shared.name}[{_ref_str(self.sbase)}] <- [descriptor at {self.dloc.mem.name}"
                f"[{_ref_str(self.dloc.base)}], box at ({c})] on {self.bar_shared.name}[{_ref_str(self.bar_base)}]")

    def accesses(self) -> List[Access]:
        if self.desc is None:  # the NVVM form: the box is the descriptor's, checked when it runs
            return [self.dloc.access(self, False), Access(self.bar_shared, self.bar_base, (0,), False, self)]
        return super().accesses() + [self.dloc.access(self, False)]

    def kernel_params(self) -> List[Tuple[str, str]]:
        return []

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        what = f"{b.ir.name}{self.where}: TMA load through a descriptor pointer"
        smem = b.shared[self.shared.index]
        sb = np.broadcast_to(np.asarray(b.index(self.sbase), dtype=np.int64), (b.n,))
        bar = np.broadcast_to(np.asarray(b.index(self.bar_base), dtype=np.int64), (b.n,))
        for t in act:
            d, byte, valid, _ = _runtime_box(self, b, buffers, int(t), what)
            if self.desc is None:  # the NVVM form: the swizzle follows the destination's address
                if (int(sb[t]) * d.dtype.bytes) % (128 if d.swizzle else 16):
                    raise LaunchError(f"{what}: the box's shared-memory destination (byte {int(sb[t]) * d.dtype.bytes} "
                                      f"of {self.shared.name}) is not {128 if d.swizzle else 16}-byte aligned")
                phys = d.placement((int(sb[t]) * d.dtype.bytes) % 1024 if d.swizzle else 0)
            else:
                phys = d.placement(self.phase)
            vals = np.zeros(byte.size, dtype=d.dtype.storage)
            if valid.any():
                for elems, inside, idx in resolve(b, buffers, byte[valid], d.dtype, what):
                    sub = np.zeros(valid.sum(), dtype=d.dtype.storage)
                    sub[inside] = elems[idx]
                    vals[np.nonzero(valid)[0][inside]] = sub[inside]
            dst = sb[t] + phys
            if dst.min() < 0 or dst.max() >= self.shared.length:
                raise LaunchError(f"{what}: the box lands at elements {int(dst.min())}..{int(dst.max())} of "
                                  f"{self.shared.name}, outside its {self.shared.length}")
            blk = b.block_of[t]
            smem[blk * self.shared.length + dst] = vals
            complete_tx(b, self.bar_shared, np.array([blk]), np.array([bar[t]]), d.box_bytes)

    def cuda(self, r: Any) -> None:
        rank = len(self.coords)
        a, ss = self.dloc.cuda_addr(r)
        if ss != ".global":
            raise TraceError(f"{self.where}: a TMA load reads its descriptor from global memory (or a kernel parameter), "
                             f"not from shared memory")
        cs = ", ".join(f"%{i + 2}" for i in range(rank))
        ins = (f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes "
               f"[%0], [%1, {{{cs}}}], [%{rank + 2}];")
        coords = ", ".join(f'"r"((int)({coord_code(r, c)}))' for c in r.index_exprs(self))
        r.emit(f'asm volatile("{ins}" :: "r"({smem_addr(r, self.shared, self.sbase)}), "l"({a}), {coords}, '
               f'"r"({smem_addr(r, self.bar_shared, self.bar_base)}) : "memory");')


class TmaStoreViaDescOp(TmaLoadOp):
    """A TMA box store through the descriptor in memory at ``dloc``: shared ``sbase`` -> global."""

    __slots__ = ("dloc",)
    stores_by_address = True  # the descriptor may name any memory (ir.nodes.Op.stores_by_address)

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        c = ", ".join(_ref_str(x) for x in self.coords)
        return (f"tma_store [descriptor at {self.dloc.mem.name}[{_ref_str(self.dloc.base)}], box at ({c})] <- "
                f"{self.shared.name}[{_ref_str(self.sbase)}]")

    def accesses(self) -> List[Access]:
        phys = self.desc.placement(self.phase)
        return [Access(self.shared, self.sbase, (int(phys.min()), int(phys.max())), False, self),
                self.dloc.access(self, False)]

    def kernel_params(self) -> List[Tuple[str, str]]:
        return []

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        d = self.desc
        what = f"{b.ir.name}{self.where}: TMA store through a descriptor pointer"
        smem = b.shared[self.shared.index]
        phys = d.placement(self.phase)
        sb = np.broadcast_to(np.asarray(b.index(self.sbase), dtype=np.int64), (b.n,))
        for t in act:
            _, byte, valid, _ = _runtime_box(self, b, buffers, int(t), what)
            src = sb[t] + phys
            if src.min() < 0 or src.max() >= self.shared.length:
                raise LaunchError(f"{what}: the box reads elements {int(src.min())}..{int(src.max())} of "
                                  f"{self.shared.name}, outside its {self.shared.length}")
            vals = smem[b.block_of[t] * self.shared.length + src]
            if valid.any():
                sel = np.nonzero(valid)[0]
                for elems, inside, idx in resolve(b, buffers, byte[sel], d.dtype, what):
                    elems[idx] = vals[sel[inside]]

    def cuda(self, r: Any) -> None:
        d = self.desc
        a, ss = self.dloc.cuda_addr(r)
        if ss != ".global":
            raise TraceError(f"{self.where}: a TMA store reads its descriptor from global memory, not shared memory")
        cs = ", ".join(f"%{i + 1}" for i in range(d.rank))
        ins = f"cp.async.bulk.tensor.{d.rank}d.global.shared::cta.bulk_group [%0, {{{cs}}}], [%{d.rank + 1}];"
        coords = ", ".join(f'"r"((int)({coord_code(r, c)}))' for c in r.index_exprs(self))
        r.emit(f'asm volatile("{ins}" :: "l"({a}), {coords}, "r"({smem_addr(r, self.shared, self.sbase)}) : "memory");')


def via_desc(op: Any, ptr: Any, what: str, store_cls: Any = None) -> Any:
    """The TMA load (or, with ``store_cls`` the plain store op's class, store) op through the descriptor
    at ptr in place of op (which used the atom's kernel parameter). (tma_store.py passes its class: it
    imports this module, not the other way round.)"""
    loc = desc_loc(ptr, what)
    cls = TmaStoreViaDescOp if store_cls is not None and isinstance(op, store_cls) else TmaLoadViaDescOp
    if type(op) is not (store_cls if store_cls is not None else TmaLoadOp):
        raise TraceError(f"{what}: tma_desc_ptr= with a {type(op).__name__} (multicast, reduction or 2-CTA TMA) is not "
                         f"supported in cutelab yet (at {user_location()})")
    new = cls.__new__(cls)
    for k in TmaLoadOp.__slots__:
        setattr(new, k, getattr(op, k))
    new.dloc = loc
    return new


# --------------------------------------------------------------------------- the DSL's functions

def _where() -> str:
    at = user_location()
    return f" (at {at})" if at else ""


def copy_tensormap(atom: Any, ptr: Any, *, loc: Any = None, ip: Any = None) -> None:
    """``cpasync.copy_tensormap(atom, ptr)``: the atom's descriptor into the 128 bytes at ptr."""
    from ...nvgpu.cpasync.tma import TmaCopyAtom
    from .tma import name_tensor_map

    what = "cpasync.copy_tensormap"
    t = current(what)
    if not isinstance(atom, TmaCopyAtom):
        raise TraceError(f"{what}: expected a TMA atom from make_tiled_tma_atom, got {type(atom).__name__}{_where()}")
    src = getattr(atom, "runtime_src", None)
    if src is not None:
        _copy_runtime_atom(t, atom, src, ptr, what)
        return
    g = _atom_param(atom, what)
    op = TensorMapCopyOp(atom.desc, g, desc_loc(ptr, what), _where())
    name_tensor_map(t, op, g.index, atom.desc)
    t.emit(op)


def _copy_runtime_atom(t: Any, atom: Any, src: Any, ptr: Any, what: str) -> None:
    """copy_tensormap of an atom the kernel made for a tensor over a layout with runtime extents (CUTLASS's MoE
    GEMMs: one descriptor per expert): the descriptor of the tensor's kernel argument, with the atom's box and
    swizzle (a tensor-map parameter: the template), then its address, extents and strides replaced by the
    tensor's (``tensormap.replace``; on the CPU the image gets them, checked as TMA checks them)."""
    from .tma import name_tensor_map

    src = getattr(src, "runtime", src)  # a bounded view (runtime_layout._tma_view): the tensor it bounds
    eng = src.engine
    if not isinstance(eng, GmemEngine) or isinstance(eng, SmemEngine):
        raise TraceError(f"{what}: the atom was made in the kernel for a tensor at a runtime address; cutelab builds "
                         f"a descriptor in the kernel only for a tensor inside a kernel argument's global memory"
                         f"{_where()}")
    loc = desc_loc(ptr, what)
    op = TensorMapCopyOp(atom.desc, eng.param, loc, _where())
    name_tensor_map(t, op, eng.param.index, atom.desc)
    t.emit(op)
    _emit_update(t, atom.desc, src, atom.runtime_modes, loc, what)


class TensorMapPrefetchOp(Op):
    """``cpasync.prefetch_descriptor(atom)``: ``prefetch.tensormap`` of the atom's tensor-map kernel parameter
    (its tensor's ``param``), as CuTe DSL issues it, so that the kernel's first TMA with it does not wait for
    the descriptor's fetch. A cache hint: the CPU does nothing."""

    __slots__ = ("desc", "param", "tmap_name", "where")
    min_sm = 90

    def __init__(self, desc: Any, param: Any, where: str):
        self.desc, self.param, self.where = desc, param, where
        self.tmap_name = f"tmap_{param.name}"  # name_tensor_map gives it the name the atom's copies use

    def __repr__(self) -> str:
        return f"prefetch_tensormap {self.tmap_name}"

    def kernel_params(self) -> List[Tuple[str, str]]:
        return [(TENSORMAP_STRUCT, f"const __grid_constant__ cl_tensormap {self.tmap_name}")]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        return None

    def cuda(self, r: Any) -> None:
        r.emit(f'asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&{self.tmap_name}) : "memory");')


def prefetch_descriptor(atom: Any) -> None:
    """``cpasync.prefetch_descriptor(atom)`` in a kernel: a TensorMapPrefetchOp of the atom's kernel parameter.
    An atom whose tensor is no argument of the kernel (its descriptor reached the kernel some other way)
    prefetches nothing: the hint has no parameter to name."""
    from .tma import name_tensor_map

    what = "cpasync.prefetch_descriptor"
    t = current(what)
    g = getattr(t, "host_params", {}).get(id(getattr(atom, "host_engine", None)))
    if g is None:
        return
    op = TensorMapPrefetchOp(atom.desc, g, _where())
    name_tensor_map(t, op, g.index, atom.desc)
    t.emit(op)


def _atom_param(atom: Any, what: str) -> Any:
    """The kernel parameter of the tensor an atom passed to the kernel was made for."""
    p = getattr(current(what), "host_params", {}).get(id(getattr(atom, "host_engine", None)))
    if p is None:
        raise TraceError(f"{what}: the atom's tensor is not an argument of this kernel (pass the TMA tensor "
                         f"make_tiled_tma_atom returned to the kernel with the atom){_where()}")
    return p


def update_tma_descriptor(atom: Any, tensor: Any, ptr: Any, *, loc: Any = None, ip: Any = None) -> None:
    """``cpasync.update_tma_descriptor(atom, gmem_tensor, ptr)``: the descriptor at ptr gets the
    tensor's address, extents and strides (mapped to TMA dimensions as the atom's were)."""
    from ...layout import Layout
    from ... import int_tuple as it

    what = "cpasync.update_tma_descriptor"
    t = current(what)
    d = atom.desc
    tensor = getattr(tensor, "runtime", tensor)  # a bounded view (runtime_layout._tma_view): the tensor it bounds
    eng, off = tensor.engine, tensor.offset
    if isinstance(eng, AddressEngine):
        if not (isinstance(off, (int, np.integer)) and int(off) == 0):
            addr_v = eng.address_of(off)
            addr = addr_v.refs[0]
        else:
            addr = eng.addr
    elif isinstance(eng, GmemEngine) and not isinstance(eng, SmemEngine):
        t.check_index(off, what) if is_sym(off) else None
        addr = (eng.param, off)
    else:
        raise TraceError(f"{what}: the tensor must be in global memory, got a {getattr(eng, 'memspace', '?')} "
                         f"tensor{_where()}")
    if eng.dtype.name != d.dtype.name:
        raise TraceError(f"{what}: the atom copies {d.dtype}, the tensor holds {eng.dtype}{_where()}")
    from .runtime_layout import RuntimeLayout

    lay = tensor.layout
    if isinstance(lay, RuntimeLayout):  # extents and strides read in the kernel (a grouped GEMM's group)
        shape, stride = lay.shape, lay.stride
    elif isinstance(lay, Layout):
        shape = it.flatten_to_tuple(lay.shape) if isinstance(lay.shape, tuple) else (lay.shape,)
        stride = it.flatten_to_tuple(lay.stride) if isinstance(lay.stride, tuple) else (lay.stride,)
    else:
        raise TraceError(f"{what}: the tensor's layout must be a Layout, got {lay}{_where()}")
    if len(shape) != len(atom.gmem_layout.shape if isinstance(atom.gmem_layout.shape, tuple) else (1,)) \
            or max(d.modes) >= len(shape):
        raise TraceError(f"{what}: the tensor {lay} does not have the modes of the tensor {atom.gmem_layout} the atom "
                         f"was made for{_where()}")
    _emit_update(t, d, tensor, d.modes, desc_loc(ptr, what), what, (addr, shape, stride))


def _emit_update(t: Any, d: Any, tensor: Any, modes: Any, loc: DescLoc, what: str, known: Any = None) -> None:
    """A TensorMapUpdateOp giving the descriptor at loc the tensor's address, and the extent and byte stride of
    its mode ``modes[k]`` for each TMA dimension k of d."""
    if known is None:
        from ...layout import Layout
        from .runtime_layout import RuntimeLayout

        eng, off = tensor.engine, tensor.offset
        t.check_index(off, what) if is_sym(off) else None
        addr = (eng.param, off)
        lay = tensor.layout
        if not isinstance(lay, (RuntimeLayout, Layout)):
            raise TraceError(f"{what}: the tensor's layout must be a Layout, got {lay}{_where()}")
        shape, stride = lay.shape, lay.stride
        shape = shape if isinstance(shape, tuple) else (shape,)
        stride = stride if isinstance(stride, tuple) else (stride,)
    else:
        addr, shape, stride = known
    eb = d.dtype.bytes

    def val(x: Any, scale: int) -> Any:
        if isinstance(x, TraceValue):
            from ...numeric import Int64

            v = x.to(Int64) * scale if scale != 1 else x.to(Int64)
            t.check_refs(v.refs, what)
            return v.refs[0]
        return int(x) * scale

    dims = tuple(val(shape[m], 1) for m in modes)
    strides = tuple(val(stride[m], eb) for m in modes)
    if isinstance(addr, tuple) and not hasattr(addr[0], "kind"):
        t.check_refs([addr], what)
    t.emit(TensorMapUpdateOp(loc, addr, dims, strides, eb, _where()))


def fence_tma_desc_acquire(ptr: Any, *, loc: Any = None, ip: Any = None) -> None:
    what = "cpasync.fence_tma_desc_acquire"
    current(what).emit(TensorMapFenceOp("acquire", desc_loc(ptr, what), where=_where()))


def fence_tma_desc_release(*, loc: Any = None, ip: Any = None) -> None:
    current("cpasync.fence_tma_desc_release").emit(TensorMapFenceOp("release", where=_where()))


def cp_fence_tma_desc_release(gptr: Any, sptr: Any, *, loc: Any = None, ip: Any = None) -> None:
    what = "cpasync.cp_fence_tma_desc_release"
    g, s = desc_loc(gptr, what), desc_loc(sptr, what)
    if g.shared or not s.shared:
        raise TraceError(f"{what}: copies a descriptor from shared memory (second argument) to global memory (first)"
                         f"{_where()}")
    current(what).emit(TensorMapFenceOp("cp_release", g, s, _where()))


def nvvm_tma_load(dst_ptr: Any, desc_ptr: Any, coords: Any, mbar_ptr: Any, predicate: Any = None) -> None:
    """NVVM's ``CpAsyncBulkTensorGlobalToSharedClusterOp`` (tile mode): a TMA load of the box at
    ``coords`` (innermost first) through the descriptor at desc_ptr into shared memory at dst_ptr,
    completing on the mbarrier at mbar_ptr; where ``predicate`` (a traced Boolean) holds. The box and
    element type are the descriptor's (read when it runs on the CPU)."""
    from ...layout import make_layout
    from ..frontend.smem import SmemPtr
    from .mbarrier import mbar_ref
    from .tma import coord_refs

    what = "nvvm.CpAsyncBulkTensorGlobalToSharedClusterOp"
    t = current(what)
    if isinstance(dst_ptr, SmemPtr):
        if dst_ptr.dtype is None:
            raise TraceError(f"{what}: the destination pointer has no element type{_where()}")
        view = dst_ptr.tensor(make_layout(1), dst_ptr.dtype)
        eng, off = view.engine, view.offset
    else:
        eng, off = getattr(dst_ptr, "engine", None), getattr(dst_ptr, "offset", None)
    if not isinstance(eng, SmemEngine):
        raise TraceError(f"{what}: the destination must be a shared-memory pointer, got {type(dst_ptr).__name__}"
                         f"{_where()}")
    bsh, bbase = mbar_ref(mbar_ptr, what)
    cs = coord_refs(t, tuple(_coord(c) for c in coords), what)
    op = TmaLoadViaDescOp.__new__(TmaLoadViaDescOp)
    op.desc, op.param, op.coords, op.shared, op.sbase = None, None, cs, eng.param, off
    op.bar_shared, op.bar_base, op.where, op.tmap_name, op.phase = bsh, bbase, _where(), "", 0
    op.dloc = desc_loc(desc_ptr, what)
    eng.param.written = True
    if predicate is None:
        t.emit(op)
        return
    cond = predicate.refs[0] if isinstance(predicate, TraceValue) else predicate
    if isinstance(cond, bool):
        if cond:
            t.emit(op)
        return
    br = t.begin_if(cond)
    outer, t.cur = t.cur, br.then
    t.emit(op)
    t.cur = outer


def _coord(c: Any) -> Any:
    """A coordinate as TMA takes it: an int, or a traced Int32 (a cutlass Int32 constant as its int)."""
    if isinstance(c, TraceValue) or isinstance(c, (int, np.integer)) or is_sym(c):  # is_sym: a loop index expression
        return c
    v = getattr(c, "value", None)
    if isinstance(v, (int, np.integer)):
        return int(v)
    raise TraceError(f"nvvm TMA load: a coordinate must be an integer, got {type(c).__name__}{_where()}")


class TensorMapPrefetchAtOp(Op):
    """NVVM's ``prefetch`` with ``tensormap=True`` of a descriptor in memory (CUTLASS's MoE kernels prefetch each
    expert's descriptor from their workspace): ``prefetch.tensormap [p]``. A cache hint: the CPU does nothing."""

    __slots__ = ("dloc", "where")
    min_sm = 90

    def __init__(self, loc: DescLoc, where: str):
        self.dloc, self.where = loc, where

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        return f"prefetch_tensormap {self.dloc.mem.name}[{_ref_str(self.dloc.base)}]"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        return None

    def cuda(self, r: Any) -> None:
        a, ss = self.dloc.cuda_addr(r)
        space = "" if ss == ".global" else ss
        r.emit(f'asm volatile("prefetch{space}.tensormap [%0];" :: "l"({a}) : "memory");')


def nvvm_prefetch(addr: Any, *, cache_level: Any = None, evict_priority: Any = None, predicate: Any = None,
                  tensormap: Any = None, uniform: Any = None, in_param_space: Any = None, loc: Any = None,
                  ip: Any = None) -> None:
    """``cute.arch.prefetch(ptr, tensormap=True)`` (CuTe DSL's NVVM wrapper) of a TMA descriptor in global or
    shared memory. Prefetches of data into a cache level are not supported in cutelab yet (refused)."""
    what = "cute.arch.prefetch"
    t = current(what)
    if not tensormap or cache_level is not None or evict_priority is not None or uniform or in_param_space:
        raise TraceError(f"{what}: cutelab prefetches TMA descriptors only (tensormap=True, no cache level, eviction "
                         f"priority, uniform or parameter-space form){_where()}")
    if predicate is not None:
        raise TraceError(f"{what}: a predicated prefetch is not supported in cutelab yet{_where()}")
    t.emit(TensorMapPrefetchAtOp(desc_loc(addr, what), _where()))
