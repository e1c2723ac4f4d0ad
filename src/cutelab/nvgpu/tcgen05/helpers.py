"""SM100 shared-memory layout atoms and ``tile_to_mma_shape``, as ``cute.nvgpu.tcgen05`` has them.

An atom is the smallest swizzled layout from which an SMEM layout for a UMMA operand is built
(legal for both TMA and UMMA): 8 rows of 16, 32, 64 or 128 bytes, M/N-major or K-major, composed
with Swizzle<B,4,3> over 16-byte units; SM100 adds ``MN_SW128_32B`` (128-byte rows swizzled in
32-byte units, Swizzle<2,5,2>), which TF32 MN-major operands use.

>>> from cutelab import Float16
>>> atom = make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, Float16)
>>> print(atom)
S<3,4,3> o 0 o (8,64):(64,1)
>>> print(tile_to_mma_shape(atom, ((128, 64), 1, 2, 3)))
S<3,4,3> o 0 o ((128,64),1,2,3):((64,1),0,8192,16384)
"""

from __future__ import annotations

import enum
from typing import Any, Optional

from ... import int_tuple as it
from ...algebra import coalesce, tile_to_shape, tiled_divide
from ...errors import LayoutError
from ...layout import Layout, _normalize, make_layout
from ...numeric import Boolean, Numeric, is_numeric_type
from ...swizzle import ComposedLayout, make_composed_layout, make_swizzle
from ..universal_mma import OperandMajorMode

__all__ = ["SmemLayoutAtomKind", "make_smem_layout_atom", "tile_to_mma_shape"]


class SmemLayoutAtomKind(enum.Enum):
    """The kinds of SM100 SMEM layout atoms: M/N-major or K-major, interleaved or swizzled."""

    MN_INTER = enum.auto()
    MN_SW32 = enum.auto()
    MN_SW64 = enum.auto()
    MN_SW128 = enum.auto()
    MN_SW128_32B = enum.auto()
    K_INTER = enum.auto()
    K_SW32 = enum.auto()
    K_SW64 = enum.auto()
    K_SW128 = enum.auto()

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self.name}>"

    @property
    def is_mn_major(self) -> bool:
        return self.name.startswith("MN_")

    @property
    def contiguous_bits(self) -> int:
        """Bits in one row of the atom along its major mode (16, 32, 64 or 128 bytes)."""
        return _KIND[self.name.split("_", 1)[1]][0]

    @property
    def swizzle(self) -> tuple:
        """(B, M, S) of the atom's Swizzle<B,M,S>."""
        return _KIND[self.name.split("_", 1)[1]][1]


_KIND = {"INTER": (128, (0, 4, 3)), "SW32": (256, (1, 4, 3)), "SW64": (512, (2, 4, 3)),
         "SW128": (1024, (3, 4, 3)), "SW128_32B": (1024, (2, 5, 2))}


def make_smem_layout_atom(kind: SmemLayoutAtomKind, element_type: Any) -> ComposedLayout:
    """The SM100 SMEM layout atom of ``kind`` in units of ``element_type`` elements.

    M/N-major atoms are (n, 8):(1, n), K-major atoms (8, n):(n, 1), n = row bits / element bits
    (rounded down, as CuTe DSL divides), composed with the kind's swizzle.

    >>> from cutelab import Float32
    >>> print(make_smem_layout_atom(SmemLayoutAtomKind.MN_SW128_32B, Float32))
    S<2,5,2> o 0 o (32,8):(1,32)
    """
    if not is_numeric_type(element_type):
        raise LayoutError(f"tcgen05.make_smem_layout_atom: element_type must be a Numeric, but got {element_type!r}")
    if not isinstance(kind, SmemLayoutAtomKind):
        raise LayoutError(f"tcgen05.make_smem_layout_atom({kind!r}, {element_type}): unrecognized SMEM layout atom "
                          f"kind (expected a tcgen05.SmemLayoutAtomKind)")
    n = kind.contiguous_bits // element_type.width
    sw = make_swizzle(*kind.swizzle)
    if kind.is_mn_major:
        return make_composed_layout(sw, 0, make_layout((n, 8), stride=(1, n)))
    return make_composed_layout(sw, 0, make_layout((8, n), stride=(n, 1)))


def tile_to_mma_shape(atom: Any, mma_tile_shape: Any, order: Any = None) -> Any:
    """Tile an SMEM layout atom to an MMA-partitioned shape ((MMA_MN,MMA_K),MMA_MNs,MMA_Ks,...).

    As CuTe's UMMA::tile_to_mma_shape: the atom is tiled (tile_to_shape, in ``order``) to
    ((MMA_MN,MMA_MNs),(MMA_K,MMA_Ks),...), then divided back into one MMA's tile and the rest,
    and coalesced to the profile of ``mma_tile_shape``. ``order`` has one entry per mode after
    the first (default: 0, 1, 2, ...).
    """
    shape = _normalize(mma_tile_shape)
    what = f"tcgen05.tile_to_mma_shape({atom}, {it.tuple_str(shape) if isinstance(shape, tuple) else shape})"
    if not isinstance(atom, (Layout, ComposedLayout)):
        raise LayoutError(f"{what}: the atom must be a Layout or a ComposedLayout")
    r = len(shape) if isinstance(shape, tuple) else 1
    if order is None:
        order = tuple(range(r - 1))
    order = _normalize(order)
    ro = len(order) if isinstance(order, tuple) else 1
    if ro != r - 1:
        raise LayoutError(f"{what}: rank(order)={ro} must be equal to rank(mma_tile_shape)-1={r - 1}")
    if r < 3 or not isinstance(shape[0], tuple) or len(shape[0]) != 2:
        raise LayoutError(f"{what}: expected an MMA tile shape ((MMA_MN,MMA_K),MMA_MNs,MMA_Ks,...) of rank >= 3")
    # as CuTe DSL does, a mode smaller than the atom's is rounded up to whole atoms (more MMAs along it)
    outer = atom.outer if isinstance(atom, ComposedLayout) else atom
    ashape = outer.shape if isinstance(outer.shape, tuple) else (outer.shape,)
    rest = []
    for i in (0, 1):
        mma, n = it.product(shape[0][i]), it.product(shape[1 + i])
        a = it.product(ashape[i]) if i < len(ashape) else 1
        total = mma * n
        if total % a:
            total = -(-total // a) * a
            if total % mma:
                raise LayoutError(f"{what}: the atom's {a} along mode {i} and one MMA's {mma} do not tile together")
        rest.append(shape[1 + i] if total == mma * n else total // mma)
    mn_shape = ((shape[0][0], rest[0]), (shape[0][1], rest[1])) + tuple(shape[3:])
    shape = (shape[0], rest[0], rest[1]) + tuple(shape[3:])
    tiled = tile_to_shape(atom, mn_shape, order)
    out = tiled_divide(tiled, it.product_each(shape[0]))
    return coalesce(out, target_profile=shape)


# --------------------------------------------------------------------------- a tiled UMMA's operand layouts
# (cutlass.utils.blackwell_helpers' names, which import them from here: built from the atoms above only)

def _flat_size(x: Any) -> int:
    return it.product(x.shape if isinstance(x, Layout) else x)


def get_smem_layout_atom_ab(major_mode: OperandMajorMode, element_type: Numeric, smem_shape_mn_k: Any,
                            sparsity: int = 1) -> SmemLayoutAtomKind:
    """The widest swizzle whose row divides the major mode (MN_SW128_32B for 32-bit MN-major).

    >>> from cutelab import Float32
    >>> get_smem_layout_atom_ab(OperandMajorMode.MN, Float32, (64, 32)).name
    'MN_SW128_32B'
    """
    if not is_numeric_type(element_type):
        raise LayoutError(f"get_smem_layout_atom_ab: element_type must be a Numeric, got {element_type!r}")
    k_major = major_mode is OperandMajorMode.K
    size = _flat_size(smem_shape_mn_k[1] if k_major else smem_shape_mn_k[0])
    if size % 8:
        raise LayoutError(f"get_smem_layout_atom_ab({major_mode}, {element_type}, {it.tuple_str(smem_shape_mn_k)}): "
                          f"the major mode's extent {size} is not a multiple of 8")
    # CuTe DSL's Boolean is one bit wide here (make_smem_layout_epi maps it to Int8 before asking)
    bits = size * (1 if element_type is Boolean else element_type.width)
    if k_major:
        bits //= sparsity
    if bits % 128:
        raise LayoutError(f"get_smem_layout_atom_ab({major_mode}, {element_type}, {it.tuple_str(smem_shape_mn_k)}): "
                          f"the major mode holds {bits} bits, not a multiple of 128 (16 bytes)")
    pre = "K" if k_major else "MN"
    if not k_major and element_type.width == 32 and bits % 1024 == 0:
        return SmemLayoutAtomKind.MN_SW128_32B
    for b, name in ((1024, "SW128"), (512, "SW64"), (256, "SW32")):
        if bits % b == 0:
            return SmemLayoutAtomKind[f"{pre}_{name}"]
    return SmemLayoutAtomKind[f"{pre}_INTER"]


def make_smem_layout(leading_mode: OperandMajorMode, smem_tile_shape: Any, a_dtype: Numeric, num_stages: int) -> Any:
    """A staged SMEM layout of an operand tile (MN, K): the atom tiled to it with the stages last."""
    kind = get_smem_layout_atom_ab(leading_mode, a_dtype, smem_tile_shape)
    atom = make_smem_layout_atom(kind, a_dtype)
    order = (0, 1, 2) if leading_mode is OperandMajorMode.K else (1, 0, 2)
    out = tile_to_shape(atom, tuple(smem_tile_shape) + (num_stages,), order)
    return coalesce(out, target_profile=(1, 1, 1))


def _operand_layout(tiled_mma: Any, shape: Any, dtype: Numeric, num_stages: int, k_major: bool) -> Any:
    mn_k = (_flat_size(shape[0][0]) * shape[1], _flat_size(shape[0][1]) * shape[2])
    kind = get_smem_layout_atom_ab(OperandMajorMode.K if k_major else OperandMajorMode.MN, dtype, mn_k)
    atom = make_smem_layout_atom(kind, dtype)
    return tile_to_mma_shape(atom, tuple(shape) + (num_stages,), (1, 2, 3) if k_major else (2, 1, 3))


def _tile3(mma_tiler_mnk: Any, what: str) -> tuple:
    t = tuple(mma_tiler_mnk)
    if len(t) != 3:
        raise LayoutError(f"{what}: mma_tiler_mnk must be (M, N, K), got {it.tuple_str(t)}")
    return t


def make_smem_layout_a(tiled_mma: Any, mma_tiler_mnk: Any, a_dtype: Numeric, num_stages: int, *,
                       is_k_major: Optional[bool] = None) -> Any:
    """The staged SMEM layout of A for a tiled UMMA and its (M, N, K) tile: ((MMA_M,MMA_K),M,K,STAGES)."""
    m, _, k = _tile3(mma_tiler_mnk, "make_smem_layout_a")
    km = tiled_mma.op.a_major_mode is OperandMajorMode.K if is_k_major is None else is_k_major
    return _operand_layout(tiled_mma, tiled_mma.partition_shape_A((m, k)), a_dtype, num_stages, km)


def make_smem_layout_b(tiled_mma: Any, mma_tiler_mnk: Any, b_dtype: Numeric, num_stages: int, *,
                       is_k_major: Optional[bool] = None) -> Any:
    """The staged SMEM layout of B for a tiled UMMA and its (M, N, K) tile: ((MMA_N,MMA_K),N,K,STAGES)."""
    _, n, k = _tile3(mma_tiler_mnk, "make_smem_layout_b")
    km = tiled_mma.op.b_major_mode is OperandMajorMode.K if is_k_major is None else is_k_major
    return _operand_layout(tiled_mma, tiled_mma.partition_shape_B((n, k)), b_dtype, num_stages, km)


def make_smem_layout_c(tiled_mma: Any, mma_tiler_mnk: Any, c_dtype: Numeric, num_stages: int, is_m_major: bool) -> Any:
    """The staged SMEM layout of C (no epilogue subtiling): ((MMA_M,MMA_N),M,N,STAGES)."""
    m, n, _ = _tile3(mma_tiler_mnk, "make_smem_layout_c")
    return _operand_layout(tiled_mma, tiled_mma.partition_shape_C((m, n)), c_dtype, num_stages, not is_m_major)
