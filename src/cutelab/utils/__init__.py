"""Helpers that CuTe DSL kernels use, named as in ``cutlass.utils``.

``sm90`` (``cutlass.utils.hopper_helpers``): the SMEM layouts of Hopper GEMM operands.
``sm100`` (``cutlass.utils.blackwell_helpers``): the SMEM layouts, trivial tiled UMMAs, epilogue tiles
and TMEM load ops of Blackwell GEMMs; their names are also top-level, as in ``cutlass.utils``.
``blockscaled_layout``: the scale-factor layouts of block-scaled UMMAs.
``print_latex`` / ``print_latex_tv``: LaTeX pictures of a layout and a TV layout, as CuTe DSL prints them.
``distributed`` (imported when first used): flag waits and signals of distributed kernels.
``smem_allocator``/``tmem_allocator``: shared and tensor memory inside a kernel.

May import: ``cutelab``'s core (the shared-memory table of ``emulated_gpu`` among it), the atoms
(``cutelab.nvgpu``) and the kernel (``cutelab.kernel``: the allocators and flag waits run inside
kernels); ``gemm`` also the pipelines. Never ``compat`` or the command line. Nothing below the
kernel imports this package.
"""

from . import hopper_helpers as sm90  # noqa: F401
from .hopper_helpers import LayoutEnum  # noqa: F401
from .hopper_helpers import get_smem_layout_atom as sm90_get_smem_layout_atom  # noqa: F401
from .hopper_helpers import make_smem_layout_a as sm90_make_smem_layout_a  # noqa: F401
from .hopper_helpers import make_smem_layout_b as sm90_make_smem_layout_b  # noqa: F401
from .hopper_helpers import make_smem_layout_epi as sm90_make_smem_layout_epi  # noqa: F401
from .hopper_helpers import sm90_get_smem_store_op  # noqa: F401
from . import blackwell_helpers as sm100  # noqa: F401
from .blackwell_helpers import (  # noqa: F401  (cutlass.utils.<name> is the SM100 helper, as in CuTe DSL)
    compute_epilogue_tile_shape, get_smem_layout_atom_ab, get_smem_layout_atom_epi, get_tmem_load_op,
    make_blockscaled_trivial_tiled_mma, make_smem_layout, make_smem_layout_a, make_smem_layout_b, make_smem_layout_epi,
    make_trivial_tiled_mma,
)
from .blockscaled_layout import (  # noqa: F401
    BlockScaledBasicChunk, make_smem_layout_sfa, make_smem_layout_sfb, make_tmem_layout_sfa, make_tmem_layout_sfb,
    tile_atom_to_shape_SF,
)
from .smem_allocator import SmemAllocator, get_smem_capacity_in_bytes  # noqa: F401  (shared memory inside @cute.kernel)
from .print_latex import print_latex, print_latex_tv  # noqa: F401  (CuTe DSL's LaTeX pictures)
from .tmem_allocator import TmemAllocator, get_num_tmem_alloc_cols  # noqa: F401  (tensor memory inside @cute.kernel)
from .tensor_helpers import create_cute_tensor_for_fp8, is_fp8_dtype  # noqa: F401  (kernel tensors from torch's)

__all__ = ["sm90", "LayoutEnum", "sm90_get_smem_layout_atom", "sm90_make_smem_layout_a",
           "sm90_make_smem_layout_b", "sm90_make_smem_layout_epi", "sm90_get_smem_store_op", "SmemAllocator", "get_smem_capacity_in_bytes", "print_latex",
           "print_latex_tv", "sm100", "compute_epilogue_tile_shape", "get_smem_layout_atom_ab", "get_smem_layout_atom_epi",
           "get_tmem_load_op", "make_blockscaled_trivial_tiled_mma", "make_smem_layout", "make_smem_layout_a",
           "make_smem_layout_b", "make_smem_layout_epi", "make_trivial_tiled_mma", "BlockScaledBasicChunk",
           "make_smem_layout_sfa", "make_smem_layout_sfb", "make_tmem_layout_sfa", "make_tmem_layout_sfb",
           "tile_atom_to_shape_SF", "TmemAllocator", "get_num_tmem_alloc_cols", "is_fp8_dtype",
           "create_cute_tensor_for_fp8"]


def __getattr__(name: str):
    if name in ("distributed", "gemm"):  # kernel machinery: imported when a program first uses it
        import importlib

        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
