"""Tensor-memory tensors and shared-memory descriptor tensors: the fragments of a tiled UMMA.

Tensor memory (TMEM) is 128 lanes (data paths, DP) x 512 columns of 32-bit cells per CTA. CuTe
addresses it in units of the element type T: a column holds 32/bits(T) elements, and the lane
is the upper half of the address, so one lane step is 65536 * 32/bits(T) (CuTe's TMEM::DP<T>).
An accumulator of f32 made for a 128 x N UMMA is therefore ((128,N)):((65536,1)).

The layouts follow CuTe's UMMA::tmem_frg (include/cute/atom/mma_traits_sm100_frag.hpp): an atom
of (M_MMA, N_MMA) per CTA, in "virtual" addresses dp + 128 * column, tiled over the rest modes and
re-strided to TMEM addresses; 64-row atoms use half of each of the four sub-partitions (lanes
0-15, 32-47, ...) and either interleave two atoms in a sub-partition or not.

>>> import cutelab as cute
>>> from cutelab.nvgpu import tcgen05, OperandMajorMode
>>> op = tcgen05.MmaF16BF16Op(cute.Float16, cute.Float32, (128, 128), tcgen05.CtaGroup.ONE,
...                           tcgen05.OperandSource.SMEM, OperandMajorMode.K, OperandMajorMode.K)
>>> mma = cute.make_tiled_mma(op)
>>> print(mma.make_fragment_C(mma.partition_shape_C((128, 256))))
tensor<ptr<f32, tmem, align<1>> o ((128,128),1,2):((65536,1),0,128)>
"""

from __future__ import annotations

from typing import Any

from ... import int_tuple as it
from ...algebra import composition, tiled_product
from ...errors import LayoutError, TensorError
from ...layout import Layout, _normalize, make_layout
from ...numeric import Numeric
from ...tensor import Tensor

__all__ = ["TmemEngine", "SmemDescEngine", "tmem_dp_stride", "tmem_frg_layout", "make_umma_fragment",
           "find_tmem_tensor_col_offset"]

#: the lanes (data paths) and 32-bit columns of a CTA's tensor memory
TMEM_LANES, TMEM_COLUMNS = 128, 512


def _elems_per_column(dtype: Numeric) -> int:
    """Elements of dtype in one 32-bit TMEM column: 32/bits, a 6-bit type addressed as a 4-bit one
    (as CuTe DSL addresses f6 operands in TMEM)."""
    w = dtype.width
    if w > 32 or w < 4:
        raise TensorError(f"tensor memory holds elements of 4 to 32 bits, not {dtype} ({w} bits)")
    n = 1
    while n * w < 32:
        n *= 2
    return n


def tmem_dp_stride(dtype: Numeric) -> int:
    """The address step of one TMEM lane for elements of dtype (CuTe's TMEM::DP<T>)."""
    return 65536 * _elems_per_column(dtype)


def tmem_type_name(dtype: Numeric) -> str:
    """The element type a TMEM pointer prints (CuTe DSL: signless ints print with their sign, si32)."""
    if dtype.kind == "int":
        return f"si{dtype.width}"
    if dtype.kind == "uint":
        return f"ui{dtype.width}"
    return dtype.name


class TmemEngine:
    """Tensor memory as a tensor's engine: addresses, no host data (the CPU interpreter holds TMEM)."""

    memspace = "tmem"

    def __init__(self, dtype: Numeric, address: int = 0):
        self.dtype = dtype
        self.address = address

    def ptr_str(self, offset: Any) -> str:
        al = "" if self.dtype.width == 8 else ", align<1>"  # the DSL's TMEM pointers are 1-aligned
        return f"ptr<{tmem_type_name(self.dtype)}, tmem{al}>"

    raw_ptr_str = ptr_str

    def recast(self, offset: Any, dtype: Numeric) -> tuple:
        """(engine, offset) of the same TMEM address read as elements of dtype (cute.recast_ptr): the
        lane and the column are kept, the column counted in dtype's elements (offset may be symbolic
        inside a kernel: its // and % are the index algebra's).

        >>> from cutelab import Float32, Float8E4M3FN
        >>> eng, off = TmemEngine(Float32).recast(3 * 65536 + 130, Float8E4M3FN)  # lane 3, column 130
        >>> off == 3 * 262144 + 4 * 130, eng.dtype
        (True, f8E4M3FN)
        """
        old, new = _elems_per_column(self.dtype), _elems_per_column(dtype)
        dp_old = tmem_dp_stride(self.dtype)
        lane, e = offset // dp_old, offset % dp_old
        if new >= old:
            e = e * (new // old)
        else:
            if isinstance(offset, int) and e % (old // new):
                raise TensorError(f"recast_ptr(ptr<{self.dtype}, tmem>, dtype={dtype}): the address is not at a whole "
                                  f"{dtype.width}-bit element of its column")
            e = e // (old // new)
        return TmemEngine(dtype, self.address), lane * tmem_dp_stride(dtype) + e

    @staticmethod
    def element_offset(dtype: Numeric, address: Any) -> Any:
        """The element offset of dtype's elements at the 32-bit TMEM address (lane << 16 | column): a number
        or an index expression (``cute.make_ptr(dtype, address, AddressSpace.tmem)``)."""
        epc = _elems_per_column(dtype)
        if epc == 1:
            return address
        return (address // 65536) * tmem_dp_stride(dtype) + (address % 65536) * epc

    def address_of(self, offset: Any) -> Any:
        """``ptr.toint()`` of a TMEM pointer at element offset ``offset``: its 32-bit TMEM address
        (lane << 16 | column), a number or, inside a kernel, an index expression."""
        epc = _elems_per_column(self.dtype)
        if epc == 1:
            return offset
        dp = tmem_dp_stride(self.dtype)
        return (offset // dp) * 65536 + (offset % dp) // epc

    def _no_data(self, *a: Any) -> Any:
        raise TensorError("a tensor-memory tensor has no host data: TMEM is read and written by tcgen05 copies "
                          "(tcgen05.make_tmem_copy) inside a kernel")

    load = store = read_one = write_one = _no_data


class SmemDescEngine:
    """The engine of a tensor of UMMA shared-memory descriptors (make_fragment_A/B of a smem partition).

    Each element is the 64-bit descriptor of one MMA's operand tile; the layout steps through the
    tiles in units of 16 bytes, as the descriptor's start address counts.
    """

    memspace = "smem_desc"
    dtype = None

    def __init__(self, smem: Tensor):
        self.smem = smem

    def ptr_str(self, offset: Any) -> str:
        return f"smem_desc({self.smem.engine.ptr_str(self.smem.offset)})"

    raw_ptr_str = ptr_str

    def _no_data(self, *a: Any) -> Any:
        raise TensorError("a tensor of shared-memory descriptors is read by the UMMA itself (cute.gemm), not loaded")

    load = store = read_one = write_one = _no_data


def tmem_frg_layout(dtype: Numeric, storage_bits: int, n_sm: int, mode: str, shape: Any) -> Layout:
    """The TMEM layout of a UMMA fragment of the post-partition shape ((M_MMA,N_MMA),rest...).

    mode: "interleaved" (two 64-row atoms share a sub-partition), "noninterleaved" or "duplicated"
    (2-CTA A in TMEM: every CTA holds a whole 128-row atom). storage_bits: the bits each element
    takes (32 for accumulators, whose f16 values take a column each; the element's own width for
    packed A operands).
    """
    m, n = it.product(shape[0][0]), it.product(shape[0][1])
    rest = tuple(shape[1:])
    col = storage_bits // dtype.width
    restride = Layout._raw((128, 16384), (tmem_dp_stride(dtype), col))
    if n_sm == 1 and m == 64:
        atom = Layout._raw(((16, 4), n), ((1, 32), 128))
        tile = 1 if mode == "interleaved" else 2
        rl = make_layout(rest, stride=it.compact_col_major(rest, tile))
    elif n_sm == 2 and m == 32:
        atom = Layout._raw((32, (n // 4, 4)), (1, (128, 32)))
        rl = make_layout(rest)
    elif n_sm == 2 and m == 64 and mode != "duplicated":
        atom = Layout._raw((64, (n // 2, 2)), (1, (128, 64)))
        rl = make_layout(rest)
    elif m in (64, 128):
        atom = Layout._raw((128, n), (1, 128))
        rl = make_layout(rest)
    else:
        raise TensorError(f"a UMMA tensor-memory fragment has 64 or 128 rows per CTA, got the shape {it.tuple_str(shape)}")
    try:
        return composition(restride, tiled_product(atom, rl))
    except LayoutError:
        raise TensorError(
            f"a UMMA tensor-memory fragment of shape {it.tuple_str(shape)}: its {mode} 64-row atoms fill the two "
            f"16-lane halves of each lane quarter first, so the rest modes {it.tuple_str(rest)} must begin with an "
            f"even count (CuTe DSL 4.8.1 prints this fragment with unknown 'x' extents)"
        ) from None


def find_tmem_tensor_col_offset(tmem_tensor: Any) -> int:
    """The 32-bit TMEM columns a TMEM tensor spans from its start (the column part of the cosize of its
    layout in 32-bit units): where the next allocation in the same TMEM can begin.

    >>> import cutelab as cute
    >>> t = Tensor(TmemEngine(cute.Float16), Layout._raw(((128, 64), 2), ((131072, 1), 64)), 0, _checked=True)
    >>> find_tmem_tensor_col_offset(t)
    64
    """
    from ...algebra import recast_layout

    if not isinstance(tmem_tensor, Tensor) or not isinstance(tmem_tensor.engine, TmemEngine):
        raise TensorError(f"tcgen05.find_tmem_tensor_col_offset: expected a tensor-memory tensor, got {tmem_tensor}")
    bits = 32 // _elems_per_column(tmem_tensor.element_type)
    layout = recast_layout(32, bits, tmem_tensor.layout)
    return layout.cosize() & 0xFFFF


def _rank(shape: Any) -> int:
    return len(shape) if isinstance(shape, tuple) else 1


def make_umma_fragment(op: Any, what: str, input: Any, atom: Any) -> Tensor:
    """make_fragment_A/B/C of a tiled UMMA (see the module docstring)."""
    tv = {"A": atom.tv_layout_A, "B": atom.tv_layout_B, "C": atom.tv_layout_C}[what]
    in_smem = op._operand_in_smem(what)  # B, or A read from shared memory (OperandSource.SMEM)
    if in_smem:
        return _smem_desc_fragment(op, what, input, tv)
    if isinstance(input, Tensor):
        shape = input.shape
    elif isinstance(input, Layout):
        shape = input.shape
    elif isinstance(input, (tuple, int)):
        shape = _normalize(input)
    else:
        raise TensorError(f"make_fragment_{what}: expected a Tensor, a Layout or a shape, got {type(input).__name__}")
    if _rank(shape) < 3:
        raise TensorError(
            f"make_fragment_{what}({it.tuple_str(shape)}): expected input tensor to have the profile "
            f"(MMA,MMA_MN,MMA_K,...) with at least 3 modes."
        )
    vmode = tv.shape[1]
    if it.product(shape[0]) != it.product(vmode) or _rank(shape[0]) != 2:
        raise TensorError(
            f"make_fragment_{what}({it.tuple_str(shape)}): expects size of atom val mode and fragment val mode is "
            f"equal, but got atomVal {it.tuple_str(vmode)} frgValMode {it.tuple_str(shape[0])}"
        )
    n_sm = op.cta_group.value
    ts = not op._operand_in_smem("A")  # A in tensor memory (OperandSource.TMEM)
    if what == "C":
        dt, bits = op.acc_dtype, 32
        mode = "noninterleaved" if (ts and n_sm == 1) else "interleaved"
    else:
        dt = op.a_dtype
        bits = dt.width
        mode = "noninterleaved" if n_sm == 1 else "duplicated"
    layout = tmem_frg_layout(dt, bits, n_sm, mode, shape)
    return Tensor(TmemEngine(dt), layout, 0, _checked=True)


def _smem_desc_fragment(op: Any, what: str, input: Any, tv: Layout) -> Tensor:
    """The descriptors of a shared-memory partition: mode 0 (one MMA's tile) becomes one descriptor,
    the other modes step it in units of 16 bytes."""
    from ...swizzle import ComposedLayout

    name = type(op).__name__
    if not isinstance(input, Tensor):
        raise TensorError(
            f"make_fragment_{what}: {name} reads {what} from shared memory through descriptors: pass the "
            f"partitioned shared-memory tensor (thr_mma.partition_{what}(sX)), not a shape"
        )
    if input.memspace != "smem":
        raise TensorError(f"make_fragment_{what}({input}): {name} reads {what} from shared memory, but the tensor "
                          f"is in {input.memspace}")
    if isinstance(input.layout, ComposedLayout):
        raise TensorError(
            f"make_fragment_{what}({input}): Expected affine layout for {name}'s operand {what}, but got composed "
            f"layout instead: {input.layout}; use recast_ptr(ptr, swizzle, element_type) to move the swizzle to the pointer"
        )
    shape, stride = input.layout.shape, input.layout.stride
    if _rank(shape) < 3:
        raise TensorError(f"make_fragment_{what}({input}): expected input tensor to have the profile "
                          f"(MMA,MMA_MN,MMA_K,...) with at least 3 modes.")
    if it.product(shape[0]) != it.product(tv.shape[1]):
        raise TensorError(f"make_fragment_{what}({input}): mode 0 has {it.product(shape[0])} elements but one MMA's "
                          f"{what} tile has {it.product(tv.shape[1])}; partition it with this MMA's partition_{what}")
    bits = input.element_type.width

    def desc(s: Any, d: Any) -> Any:
        if isinstance(s, tuple):
            out = [desc(a, b) for a, b in zip(s, d)]
            return tuple(x[0] for x in out), tuple(x[1] for x in out)
        if s == 1:
            return 1, 0
        if not isinstance(d, int) or (d * bits) % 128:
            raise TensorError(
                f"make_fragment_{what}({input}): the stride {d} of a rest mode is not a multiple of 16 bytes; a UMMA "
                f"descriptor steps in 16-byte units"
            )
        return s, d * bits // 128

    rs, rd = desc(tuple(shape[1:]), tuple(stride[1:]))
    layout = Layout._raw((1,) + rs, (0,) + rd)
    return Tensor(SmemDescEngine(input), layout, 0, _checked=True)
