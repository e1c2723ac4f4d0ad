"""``cutlass.utils.gemm``: device-side pieces of CuTe DSL's GEMM kernels (``sm100``: the Blackwell
epilogues of the persistent dense GEMMs).

May import: what ``cutelab.utils`` may, ``cutelab.utils`` itself and the pipelines (``cutelab.pipeline``).
"""

from . import sm100  # noqa: F401

__all__ = ["sm100"]
