"""TMA loads inside traced kernels, and shared memory with a swizzle on its byte addresses.

``cute.copy(tma_atom, gmem_tile, smem_tile, tma_bar_ptr=bar)`` becomes a ``TmaLoadOp``:

- CPU: the issuing thread copies the box (elements outside the global tensor read as zero, as
  TMA fills them) into shared memory where TMA puts them, then completes ``box bytes`` of
  transactions on the mbarrier (``mbarrier.complete_tx``);
- CUDA: ``cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes`` with the
  box's coordinates and a ``const __grid_constant__`` tensor map kernel parameter named
  ``tmap_<tensor>`` (placed after the other parameters; the launch passes the 128-byte map that
  ``encode_tensor_map`` gets from the driver's cuTensorMapEncodeTiled, once per (descriptor,
  tensor address): ``tensor_map``, ``TensorMapArgs``).

TMA stores (``CopyBulkTensorTileS2GOp`` atoms) are kernel/instr/tma_store.py's. A multicast atom
with ``num_multicast`` > 1 copies the CTA's slice of the tile that tma_partition gave it.

The destination is shared memory allocated with ``SmemAllocator.allocate_tensor(dtype,
layout.outer, 1024, swizzle=layout.inner)`` (cutelab.kernel.frontend.smem's swizzled memory): the TMA
box lands where that swizzle and the atom's smem layout put each element (make_tiled_tma_atom
checks the layout against the hardware's placement, this op checks the memory's swizzle).
"""

from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np

from ... import int_tuple as it
from ...errors import LaunchError, TraceError
from ...layout import Layout, evaluate_all
from ...nvgpu.cpasync.tma import TMA_SWIZZLE_BYTES, swizzle_base_elems
from ..cuda import driver as _driver_mod
from .mbarrier import complete_tx, smem_addr
from ..ir.symbolic import floordiv, is_sym, lin_form, mod, sym_div
from ..ir.nodes import Access, Op, Shared
from ..frontend.trace import _static_offsets

__all__ = ["same_tma_elements", "TmaLoadOp", "TensorMapArgs", "start_phase", "encode_tensor_map", "tensor_map", "name_tensor_map",
           "split_base", "smem_byte_swizzle", "smem_phys", "TENSORMAP_STRUCT"]

TENSORMAP_STRUCT = "struct alignas(64) cl_tensormap { unsigned long long opaque[16]; };"


# --------------------------------------------------------------------------- swizzled shared memory

def smem_byte_swizzle(eng: Any, what: str) -> int:
    """B of the Swizzle<B,4,3> on byte addresses of a shared tensor's memory (0: not swizzled).

    Swizzled shared memory is ``cutelab.kernel.frontend.smem.SwizzledSmemEngine`` (its swizzle in element
    units); TMA and GMMA know only the 16-byte-unit swizzles of 32-, 64- and 128-byte rows."""
    sw = getattr(eng, "swizzle", None)
    if sw is None or sw.num_bits == 0:
        return 0
    if (sw.num_base, sw.num_shift) != (swizzle_base_elems(eng.dtype), 3) or sw.num_bits not in (1, 2, 3):
        raise TraceError(f"{what}: the shared memory is swizzled by {sw} (elements of {eng.dtype}), which is not "
                         f"one of the TMA/GMMA swizzles Swizzle<1|2|3,4,3> on byte addresses")
    return sw.num_bits


def smem_phys(eng: Any, offs: np.ndarray) -> np.ndarray:
    """Physical element offsets (from the start of the shared array) of logical element offsets."""
    sw = getattr(eng, "swizzle", None)
    offs = np.asarray(offs, dtype=np.int64)
    return sw(offs) if sw is not None and sw.num_bits else offs


def split_base(offset: Any, period: int, what: str) -> Tuple[Any, int]:
    """offset = base + const with base a multiple of period (so a swizzle of that period passes it
    through) and const a static int; refuses offsets whose runtime part is not such a multiple.

    >>> from cutelab.kernel.ir.symbolic import Var
    >>> b, c = split_base(Var("tid.x", 4) * 1024 + 600, 512, "example")
    >>> print(b.expr_str(), c)
    (1024 * tid.x + 512) 88
    """
    if not is_sym(offset):
        o = int(offset)
        return (o // period) * period, o % period
    terms, const = lin_form(offset)
    rest = offset - const
    if sym_div(rest) % period:
        raise TraceError(f"{what}: the offset's runtime part ({rest.expr_str()}) is not known to be a multiple of "
                         f"the swizzle's period ({period} elements), so the swizzled addresses cannot be computed "
                         f"statically; index whole swizzle atoms (e.g. a pipeline stage) at runtime")
    return rest + (const // period) * period, const % period


def same_tma_elements(a: Any, b: Any) -> bool:
    """Whether a TMA atom made for elements of type a copies a tensor of type b: the same type, or Float32
    and TFloat32 (the same 32 bits in memory: CUTLASS makes tf32 atoms for f32 tensors with
    ``internal_type=cutlass.TFloat32``)."""
    return a.name == b.name or {a.name, b.name} == {"f32", "tf32"}


# --------------------------------------------------------------------------- the TMA load op

class TmaLoadOp(Op):
    """One TMA box load: global tensor ``param`` at box origin ``coords`` (one index expression per
    TMA dimension, innermost first) into ``shared`` at element ``sbase`` (the box start, aligned to
    the swizzle), completing on barrier ``bar_shared[bar_base]``."""

    __slots__ = ("desc", "param", "coords", "shared", "sbase", "bar_shared", "bar_base", "where", "tmap_name", "phase")

    def __init__(self, desc: Any, param: Any, coords: Tuple[Any, ...], shared: Shared, sbase: Any,
                 bar_shared: Shared, bar_base: Any, where: str = ""):
        self.desc, self.param, self.coords, self.shared, self.sbase = desc, param, coords, shared, sbase
        self.bar_shared, self.bar_base, self.where = bar_shared, bar_base, where
        self.tmap_name = f"tmap_{param.name}"  # tma_copy adds a suffix when one tensor has several descriptors
        self.phase = 0  # the box start's byte offset in its swizzle pattern (a multiple of 128): start_phase

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        c = ", ".join(_ref_str(x) for x in self.coords)
        return (f"tma_load {self.shared.name}[{_ref_str(self.sbase)}] <- {self.param.name}[box {it.tuple_str(self.desc.box)} "
                f"at ({c})] on {self.bar_shared.name}[{_ref_str(self.bar_base)}]")


    def index_exprs(self) -> Tuple[Any, ...]:
        """The box coordinates (the CUDA prints them as the ``ranges`` pass simplified them)."""
        return tuple(self.coords)

    def accesses(self) -> List[Access]:
        n = int(np.prod(self.desc.box))
        phys = self.desc.placement(self.phase)
        return [Access(self.shared, self.sbase, (int(phys.min()), int(phys.max())) if n else (0,), True, self),
                Access(self.bar_shared, self.bar_base, (0,), False, self)]

    def global_box(self, b: Any, act: Any, data: Any) -> Tuple[Any, Any]:
        """(offsets, valid): per active thread (act) and box element, innermost fastest, the element's
        offset in the global tensor data and whether it lies inside the tensor (TMA's out-of-bounds
        elements are filled on loads and dropped on stores)."""
        d = self.desc
        box = np.indices(d.box[::-1]).reshape(d.rank, -1)[::-1]  # (rank, box elems), innermost fastest
        valid = np.ones((act.size, box.shape[1]), dtype=bool)
        goff = np.zeros((act.size, box.shape[1]), dtype=np.int64)
        for k in range(d.rank):
            c = coord_values(b, self.coords[k])[act]
            g = c[:, None] + box[k][None, :]
            valid &= (g >= 0) & (g < d.dims[k])
            goff += g * d.elem_strides[k]
        if self.param.length:
            valid &= (goff >= 0) & (goff < len(data))
        return goff, valid

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        d = self.desc
        data = buffers[self.param.index]
        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        if act.size == 0:
            return
        goff, valid = self.global_box(b, act, data)
        vals = np.where(valid, data[np.where(valid, goff, 0)], np.zeros((), dtype=data.dtype))
        if d.unpacked_from is not None:
            vals = pack_p64(vals)
        sb = np.broadcast_to(np.asarray(b.index(self.sbase), dtype=np.int64), (b.n,))[act]
        phys = d.placement(self.phase)
        dst = sb[:, None] + phys[None, :]
        if dst.size and (dst.min() < 0 or dst.max() >= self.shared.length):
            raise LaunchError(f"{b.ir.name}{self.where}: TMA load into {self.shared.name}: elements "
                              f"{int(dst.min())}..{int(dst.max())} fall outside its {self.shared.length} elements")
        smem = b.shared[self.shared.index]
        bar = np.broadcast_to(np.asarray(b.index(self.bar_base), dtype=np.int64), (b.n,))[act]
        for sel, blk in self.dest_blocks(b, mask, act):  # the issuing CTA's block, or each CTA of a multicast
            smem[(blk[sel] * self.shared.length)[:, None] + dst[sel]] = vals[sel]
            complete_tx(b, self.bar_shared, self.barrier_blocks(b, blk[sel]), bar[sel], d.box_bytes)

    def dest_blocks(self, b: Any, mask: Any, act: np.ndarray) -> List[Tuple[Any, np.ndarray]]:
        """(which issuing threads, receiving block of each issuing thread) pairs: the blocks of the
        batch whose shared memory receives the box (here the issuing thread's own block)."""
        return [(slice(None), b.block_of[act])]

    def barrier_blocks(self, b: Any, blk: np.ndarray) -> np.ndarray:
        """The blocks whose barrier counts the bytes that land in blocks blk: the same blocks (a
        2-CTA load, kernel/instr/tcgen05_2cta.py, counts them at the pair's leader)."""
        return blk

    def cuda(self, r: Any) -> None:
        d = self.desc
        cs = ", ".join(f"%{i + 2}" for i in range(d.rank))
        ins = (f"cp.async.bulk.tensor.{d.rank}d.shared::cluster.global.mbarrier::complete_tx::bytes "
               f"[%0], [%1, {{{cs}}}], [%{d.rank + 2}];")
        coords = ", ".join(f'"r"((int)({coord_code(r, c)}))' for c in r.index_exprs(self))
        r.emit(f'asm volatile("{ins}" :: "r"({smem_addr(r, self.shared, self.sbase)}), '
               f'"l"((unsigned long long)&{self.tmap_name}), {coords}, '
               f'"r"({smem_addr(r, self.bar_shared, self.bar_base)}) : "memory");')

    def kernel_params(self) -> List[Tuple[str, str]]:
        """(prelude line, parameter declaration) this op adds to the CUDA kernel."""
        return [(TENSORMAP_STRUCT, f"const __grid_constant__ cl_tensormap {self.tmap_name}")]


def _tile_coords(desc: Any, layout_g: Layout, offset: Any, what: str) -> Tuple[Any, ...]:
    """The coordinates (innermost TMA dimension first) of the element at `offset` of the global tensor:
    index expressions, or values in registers where the offset is one (a tile coordinate a persistent
    kernel's scheduler carries in registers)."""
    from ..frontend.trace import TraceValue

    strides = list(desc.elem_strides)
    flat = it.flatten_to_tuple(layout_g.stride) if isinstance(layout_g, Layout) else ()
    if len(flat) > max(desc.modes) and all(type(flat[m]) is int for m in desc.modes):
        # the atom's tensor layout, in TMA dimension order: the descriptor's strides, or a coordinate
        # view's (make_tiled_tma_atom of a template narrower than a tile: nvgpu/cpasync/tma.py)
        strides = [flat[m] for m in desc.modes]
    out: List[Any] = [0] * desc.rank
    rest = offset
    for k in range(desc.rank - 1, -1, -1):
        if k == 0:
            out[0] = rest
        elif isinstance(rest, TraceValue):
            out[k], rest = rest // strides[k], rest % strides[k]
        else:
            out[k] = floordiv(rest, strides[k]) if is_sym(rest) else int(rest) // strides[k]
            rest = mod(rest, strides[k]) if is_sym(rest) else int(rest) % strides[k]
    return tuple(out)


def coord_refs(t: Any, coords: Tuple[Any, ...], what: str) -> Tuple[Any, ...]:
    """TMA box coordinates as the ops hold them: index expressions and ints as they are, a value in
    registers as its one Int32 register element."""
    from ...numeric import Int32
    from ..frontend.trace import TraceValue

    out = []
    for c in coords:
        if isinstance(c, TraceValue):
            if len(c.refs) != 1 or not c.dtype.is_integer:
                raise TraceError(f"{what}: a TMA box coordinate must be one integer, got {c.dtype} x {len(c.refs)}")
            c = c.to(Int32) if c.dtype.name != "Int32" else c
            t.check_refs(c.refs, what)
            c = c.refs[0]
        out.append(c)
    return tuple(out)


def coord_values(b: Any, c: Any) -> np.ndarray:
    """CPU: one TMA box coordinate per thread of the batch (int64)."""
    from ...numeric import Int32

    if isinstance(c, tuple):  # a register element
        return np.asarray(b.column(c, Int32, real=True), dtype=np.int64)
    return np.broadcast_to(np.asarray(b.index(c), dtype=np.int64), (b.n,))


def pack_p64(vals: np.ndarray) -> np.ndarray:
    """What an unpacking TMA (CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B) writes for box elements ``vals`` (4-bit
    integers, innermost fastest, each 16 consecutive ones a 16-byte unit of shared memory): per unit, the 16
    values packed two a byte (the even one low) into its first 8 bytes, the other 8 zero, as
    ``ldmatrix ... .b8x16.b4x16_p64`` reads them (kernel/instr/ldmatrix.py unpacks them).

    >>> pack_p64(np.array([[1, -1] + [0] * 14], dtype=np.int8)).view(np.uint8).tolist()
    [[241, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]
    """
    u = (vals.astype(np.int16) & 0xF).astype(np.uint8).reshape(vals.shape[0], -1, 16)
    out = np.zeros_like(u)
    out[..., :8] = u[..., 0::2] | (u[..., 1::2] << 4)
    return out.view(np.int8).reshape(vals.shape).astype(vals.dtype, copy=False)


def coord_code(r: Any, c: Any) -> str:
    """CUDA: one TMA box coordinate."""
    from ...numeric import Int32

    if isinstance(c, tuple):
        return r.value(c, Int32)
    return r.expr(c)[0] if is_sym(c) else str(int(c))


def atom_param(t: Any, atom: Any, g: Any, desc_ptr: Any = None) -> Any:
    """The kernel parameter a TMA load or prefetch with ``atom`` from source engine ``g`` reads: the atom's
    tensor (CuTe DSL's atom holds the tensor map; the source gives the coordinates only, decoded from its offset
    with the atom's layout), which is the source's own unless the program loads another tensor of the same
    layout through its atom (CUTLASS's mixed-input FMHA decode loads the V scales at the K scales' tiles). A
    copy through a descriptor in memory (``tma_desc_ptr=``) reads the source's."""
    p = getattr(t, "host_params", {}).get(id(getattr(atom, "host_engine", None)))
    if p is None or p is g.param or desc_ptr is not None:
        return g.param
    if p.dtype.name != g.param.dtype.name and p.dtype.width != g.param.dtype.width:
        raise TraceError(f"kernel {t.name}: a TMA load through an atom made for a tensor of {p.dtype} from a tile "
                         f"of a tensor of {g.param.dtype}{t.where()}")
    return p


def _check_gmem_tile(atom: Any, gl: Any, what: str, side: str) -> None:
    """The global side of a TMA copy must be one tile of the atom's tensor (the CTA's slice of it
    for a multicast atom with num_multicast > 1), compared element by element in the tile's
    column-major order (an MMA-partitioned view of the tile, thr_mma.partition_A(gA)[(None, k)], is
    the same tile)."""
    gstride = it.flatten_to_tuple(atom.gmem_layout.stride)
    tile = tuple(atom.box_tile)
    want = _static_offsets(Layout._raw(tile, tuple(int(x) for x in gstride[:len(tile)])), "cute.copy")
    got = _static_offsets(gl, "cute.copy") if it.product(gl.shape) == len(want) else None
    if got is None or not np.array_equal(got, want):
        part = "tile" if atom.num_multicast == 1 else f"slice (1/{atom.num_multicast} of the tile, from tma_partition)"
        raise TraceError(f"{what}: the {side} {gl} is not one {part} {it.tuple_str(tile)} of the tensor "
                         f"{atom.gmem_layout} the atom was made for")


def _check_smem_tile(atom: Any, sl: Any, s: Any, what: str, side: str = "destination") -> Any:
    """The shared side must be the atom's smem layout (its slice for a multicast atom) at a
    swizzle-aligned start, in memory with the atom's swizzle; returns the box's first element."""
    d = atom.desc
    outer = atom.box_smem_layout if atom.box_smem_layout is not None else getattr(atom.smem_layout, "outer",
                                                                                   atom.smem_layout)
    if it.product(sl.shape) != it.product(atom.box_tile) or not np.array_equal(
            _static_offsets(sl, "cute.copy"), np.asarray(evaluate_all(outer), dtype=np.int64).reshape(-1)):
        raise TraceError(f"{what}: the {side} {sl} is not the atom's smem layout {outer}")
    if smem_byte_swizzle(s, what) != d.swizzle:
        raise TraceError(f"{what}: the atom's smem layout {atom.smem_layout} swizzles 16-byte units of "
                         f"{TMA_SWIZZLE_BYTES[d.swizzle] or 'no'}-byte rows but the {side}'s memory is "
                         f"{getattr(s, 'swizzle', 'not swizzled')} (allocate it with "
                         f"SmemAllocator.allocate_tensor(dtype, layout.outer, 1024, swizzle=layout.inner))")
    return None


def start_phase(d: Any, offset: Any, what: str, side: str) -> Tuple[Any, int]:
    """(start, phase) of a TMA box's shared-memory side at element offset ``offset``: the start in
    elements, and its byte offset in the swizzle pattern (1024 bytes; TMA swizzles the address).
    The start must be 128-byte aligned (16 without a swizzle), as TMA requires."""
    bits = d.dtype.width  # 4-bit elements go two to a byte
    period = max(1, (1024 if d.swizzle else 16) * 8 // bits)
    sbase, const = split_base(offset, period, what)
    if (const * bits) % (8 * (128 if d.swizzle else 16)):
        raise TraceError(f"{what}: the {side} starts at byte {const * bits / 8:g} of a {period * bits // 8}-byte "
                         f"swizzle pattern; a TMA box must start at a multiple of {128 if d.swizzle else 16} bytes")
    return (sbase + const if const else sbase), const * bits // 8


def encode_tensor_map(desc: Any, address: int) -> bytes:
    """The 128-byte CUtensorMap of desc for a tensor at device ``address``: cuTensorMapEncodeTiled
    of cutelab's CUDA driver (cuda-python's, or fake_gpu's fake); zero-filled out of bounds,
    128-byte L2 promotion, no interleave."""
    cu = _driver_mod._driver()
    a = desc.cu_encode_args(address)
    err, tmap = cu.cuTensorMapEncodeTiled(
        cu.CUtensorMapDataType(a["tensorDataType"]), a["tensorRank"], a["globalAddress"],
        [cu.cuuint64_t(x) for x in a["globalDim"]], [cu.cuuint64_t(x) for x in a["globalStrides"]],
        [cu.cuuint32_t(x) for x in a["boxDim"]], [cu.cuuint32_t(x) for x in a["elementStrides"]],
        cu.CUtensorMapInterleave(a["interleave"]), cu.CUtensorMapSwizzle(a["swizzle"]),
        cu.CUtensorMapL2promotion(a["l2Promotion"]), cu.CUtensorMapFloatOOBfill(a["oobFill"]))
    if int(err) != 0:
        raise LaunchError(f"cuTensorMapEncodeTiled({desc}, address 0x{address:x}): CUDA error {err!r}")
    return np.array([int(x) for x in tmap.opaque], dtype=np.uint64).tobytes()


_ENCODED: dict = {}  # (driver epoch, descriptor, address) -> the encoded map


def tensor_map(desc: Any, address: int) -> bytes:
    """encode_tensor_map, remembered by (descriptor, address): a tensor map depends on nothing else,
    so a tensor seen before costs a dictionary look-up, not a driver call.

    >>> from cutelab import Float16
    >>> from cutelab.kernel.cuda.fakegpu import fake_gpu
    >>> from cutelab.nvgpu.cpasync.tma import TmaDescriptor
    >>> d = TmaDescriptor(Float16, (64, 128), (2, 128), (64, 64), 3, (1, 0))
    >>> with fake_gpu() as gpu:
    ...     maps = [tensor_map(d, 0x10000), tensor_map(d, 0x10000), tensor_map(d, 0x20000)]
    ...     print(len(maps[0]), maps[0] == maps[1], maps[0] == maps[2], gpu.driver.calls["cuTensorMapEncodeTiled"])
    128 True False 2
    """
    key = (_driver_mod._EPOCH, desc, int(address))
    m = _ENCODED.get(key)
    if m is None:
        m = encode_tensor_map(desc, int(address))
        if len(_ENCODED) >= 256:
            _ENCODED.clear()
        _ENCODED[key] = m
    return m


class TensorMapArgs:
    """The tensor-map kernel parameters of a traced kernel (in the order the CUDA printer declares
    them: cuda._op_params). Each map is encoded when its tensor's device address is new (a
    launch with the addresses of the previous one writes nothing; see tensor_map)."""

    def __init__(self, ir: Any):
        from ..ir.nodes import walk

        self.items: List[Tuple[int, Any]] = []  # (storage / param index, descriptor)
        seen = set()
        for op in walk(ir.body):
            # TMA loads and stores, and copy_tensormap (instr/tensormap.py); not TMAs through a descriptor pointer
            if getattr(op, "tmap_name", None) and op.kernel_params() and op.tmap_name not in seen:
                seen.add(op.tmap_name)
                self.items.append((op.param.index, op.desc))
        n = max(1, len(self.items))
        raw = np.zeros(128 * n + 128, dtype=np.uint8)
        off = (-raw.ctypes.data) % 128
        self._raw = raw
        self.mem = raw[off: off + 128 * n]  # 128-byte aligned, one CUtensorMap per item
        self._base = self.mem.ctypes.data
        self._held: List[Any] = [None] * len(self.items)  # (driver epoch, address) of the map each slot holds

    def __len__(self) -> int:
        return len(self.items)

    def fill(self, params: Any, addresses: Any, first: int) -> None:
        """Point kernel parameter first + k at map k, encoded for its tensor's address
        (addresses[param index]) unless the slot holds that map already."""
        ep = _driver_mod._EPOCH
        for k, (i, desc) in enumerate(self.items):
            held = (ep, int(addresses[i]))
            if self._held[k] != held:
                self.mem[128 * k: 128 * (k + 1)] = np.frombuffer(tensor_map(desc, held[1]), np.uint8)
                self._held[k] = held
            params.ptrs[first + k] = self._base + 128 * k


def name_tensor_map(t: Any, op: Any, index: int, desc: Any) -> None:
    """Give op (a TMA load or store) the kernel parameter name of its tensor map: one per (tensor
    argument, descriptor) in the trace t, numbered after the first for a tensor with several."""
    names = t.__dict__.setdefault("tensor_maps", {})  # (tensor, descriptor) -> parameter name
    key = (index, desc)
    if key not in names:
        k = sum(1 for (i, _) in names if i == index)
        names[key] = op.tmap_name + (f"_{k}" if k else "")
    op.tmap_name = names[key]
