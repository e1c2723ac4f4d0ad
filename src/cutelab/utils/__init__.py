"""``cutlass.utils``: helpers of CuTe DSL kernels (SmemAllocator)."""

from .smem_allocator import SmemAllocator  # noqa: F401
