"""Blackwell (SM100) atoms, named as ``cutlass.cute.nvgpu.tcgen05``: the UMMA ops (``mma``), their
tensor-memory and descriptor fragments (``tmem``), the shared-memory layout atoms (``helpers``)
the tensor-memory copy ops (``copy``) and the shared -> tensor memory copies (``cp``). Layout algebra only: the kernel side is elsewhere.

May import: what ``cutelab.nvgpu`` may (the core, tensors and the protocol ``cutelab.tracing``, through
which ``commit`` and the atoms' runtime fields reach the kernel) and ``nvgpu``'s atom modules (``universal_copy``, ``universal_mma``, ``copy_atom``, ``mma_atom``).
Never ``cutelab.kernel`` or ``cutelab.render``.
"""

from ...errors import not_yet
from .mma import *  # noqa: F401,F403
from .tmem import TmemEngine, SmemDescEngine, find_tmem_tensor_col_offset  # noqa: F401
from .helpers import *  # noqa: F401,F403
from .copy import *  # noqa: F401,F403
from .cp import *  # noqa: F401,F403
from ...tracing import instruction as _instruction


def commit(mbar_ptr, mask=None, cta_group=None, *, loc=None, ip=None) -> None:
    """``cute.nvgpu.tcgen05.commit``: the UMMAs this CTA issued complete, then arrive on mbar_ptr
    (a kernel instruction: cutelab.kernel.instr.tcgen05_mma.commit, reached through cutelab.tracing)."""
    _instruction("tcgen05.commit")(mbar_ptr, mask, cta_group, loc=loc, ip=ip)

# CuTe DSL 4.8.1 names that cutelab does not model yet: asking for one says so (kernel-side ops such
# as commit are the kernel compiler's, reached through cutelab.tracing.instruction; sparse, SM103/SM107 and reducing TMEM loads
# are not in cutelab yet)
_NOT_YET = (
    "make_umma_smem_desc",
    "CollectorOp", "CollectorBBuffer", "MmaF16BF16SparseOp", "MmaFP8SparseOp",
    "SM107MmaFP8Op", "SM107MmaF16BF16SparseOp", "SM107MmaFP8SparseOp", "SM103MmaMXF4Op", "SM103MmaMXF4NVF4Op",
    "SM107MmaMXF4NVF4Op", "SM107BlockScaledMmaMXF8F6F4Op", "make_sparse_smem_layout_atom",
    "LdRed16x32bx2Op", "LdRed32x32bOp", "LdSPCompress32x32bOp", "LdRedSPCompress32x32bOp",
)


def __getattr__(name: str):
    if name == "OperandMajorMode":  # deprecated in CuTe DSL in favour of cute.nvgpu.OperandMajorMode (the same enum)
        import warnings

        from ..universal_mma import OperandMajorMode

        warnings.warn("tcgen05.OperandMajorMode is deprecated, use cute.nvgpu.OperandMajorMode instead",
                      DeprecationWarning, stacklevel=2)
        return OperandMajorMode
    if name in _NOT_YET:
        return _not_yet(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _not_yet(name: str) -> type:
    """A stand-in (errors.not_yet) for a CuTe DSL 4.8.1 name cutelab lacks: it imports (libraries list
    these ops in module-level tuples for isinstance checks), and using it raises naming it and the user's line."""
    cls = globals().get(name)
    if cls is None:
        cls = globals()[name] = not_yet(f"cute.nvgpu.tcgen05.{name}")
    return cls
