"""``cutlass.utils.TmemAllocator`` (CuTe DSL 4.8.1's ``cutlass.memory.TmemAllocator``): tensor-memory
allocation of a CTA by one allocator warp, for use inside ``@cute.kernel`` functions.

``allocate(n)`` has the allocator warp run ``cute.arch.alloc_tmem(n, holding_word)``;
``wait_for_alloc()`` is the named barrier ``barrier_for_retrieve`` the other warps wait at;
``retrieve_ptr(dtype)`` reads the address back (``cute.arch.retrieve_tmem_ptr``);
``relinquish_alloc_permit()`` and ``free(ptr[, n])`` are the allocator warp's
``relinquish_tmem_alloc_permit`` and ``dealloc_tmem`` (all allocated columns by default). The
column-count rules are checked when the kernel is traced (a power of two of at least 32, at most
512 in all); the interpreter checks the rest (kernel/instr/tcgen05_tmem.py).

The 2-CTA form (``is_two_cta=True``, for 2-CTA UMMAs): each CTA of the pair allocates (and frees)
the same columns of its own tensor memory; ``free`` first waits for the peer's allocator warp at the
dealloc mbarrier (each of its 32 threads arrives on the peer's barrier), as CuTe DSL does.
"""

from __future__ import annotations

from typing import Any

from ..errors import TraceError

__all__ = ["TmemAllocator", "get_num_tmem_alloc_cols"]

_MAX_COLUMNS = 512


def get_num_tmem_alloc_cols(tmem_tensors: Any, rounding: bool = True, *, arch: str = "sm_100") -> int:
    """Columns to allocate for the TMEM tensors (one or a list): the sum of their column spans,
    rounded up to a power of two of at least 32 when rounding."""
    from ..nvgpu.tcgen05.tmem import find_tmem_tensor_col_offset

    ts = tmem_tensors if isinstance(tmem_tensors, (list, tuple)) else [tmem_tensors]
    n = sum(find_tmem_tensor_col_offset(t) for t in ts)
    if n > _MAX_COLUMNS:
        raise ValueError(f"get_num_tmem_alloc_cols: the tensors span {n} columns, more than the {_MAX_COLUMNS} of "
                         f"tensor memory")
    if not rounding:
        return n
    r = 32
    while r < n:
        r *= 2
    return r


class TmemAllocator:
    """Tensor-memory allocation by one warp of the CTA (see the module docstring)."""

    def __init__(self, alloc_result_dst_smem_ptr: Any = None, *, barrier_for_retrieve: Any,
                 allocator_warp_id: int = 0, is_two_cta: bool = False, num_allocated_columns: int = 0,
                 two_cta_tmem_dealloc_mbar_ptr: Any = None, arch: str = "sm_100", initialize_mbarrier: bool = True,
                 loc: Any = None, ip: Any = None):
        if is_two_cta and (two_cta_tmem_dealloc_mbar_ptr is None) != (alloc_result_dst_smem_ptr is None):
            raise TraceError("TmemAllocator: Mixed smem ptr ownership is not allowed for two-CTA: omit both (auto via "
                             "TmemAllocator) or provide both (manual).")
        if alloc_result_dst_smem_ptr is None:
            from ..numeric import Int32, Int64
            from .smem_allocator import SmemAllocator

            alloc_result_dst_smem_ptr = SmemAllocator().allocate(Int32, byte_alignment=8)
            if is_two_cta:
                two_cta_tmem_dealloc_mbar_ptr = SmemAllocator().allocate(Int64, byte_alignment=8)
        if not isinstance(allocator_warp_id, int) or allocator_warp_id < 0:
            raise TraceError(f"TmemAllocator: allocator_warp_id must be a static warp index, got {allocator_warp_id!r}")
        self._alloc_result_dst_smem_ptr = alloc_result_dst_smem_ptr
        self._barrier_for_retrieve = barrier_for_retrieve
        self._allocator_warp_id = allocator_warp_id
        self._is_two_cta = bool(is_two_cta)
        self._two_cta_tmem_dealloc_mbar_ptr = two_cta_tmem_dealloc_mbar_ptr
        self._num_allocated_columns = int(num_allocated_columns)
        self._arch = arch
        if self._is_two_cta and initialize_mbarrier:  # the pair's dealloc handshake: one warp of each CTA arrives
            from ..kernel import arch as _arch

            def init() -> None:
                with _arch.elect_one():
                    _arch.mbarrier_init(self._two_cta_tmem_dealloc_mbar_ptr, 32)

            self._in_allocator_warp(init, "__init__")
            _arch.mbarrier_init_fence()

    def check_valid_num_columns(self, num_columns: int) -> bool:
        """Whether num_columns is a multiple of 32, a power of two and at most 512."""
        n = num_columns
        return isinstance(n, int) and 0 <= n <= _MAX_COLUMNS and n % 32 == 0 and (n & (n - 1)) == 0

    def _allocator_warp(self) -> Any:
        from ..kernel import arch

        return arch.make_warp_uniform(arch.warp_idx()) == self._allocator_warp_id

    def _in_allocator_warp(self, fn: Any, what: str) -> None:
        from ..kernel.frontend.trace import current

        t = current(f"TmemAllocator.{what}")
        op = t.begin_if(self._allocator_warp())
        outer, t.cur = t.cur, op.then
        try:
            fn()
        finally:
            t.cur = outer

    def allocate(self, num_columns: int, *, loc: Any = None, ip: Any = None) -> None:
        """The allocator warp allocates num_columns columns (a static power of two, 32 to 512)."""
        from ..kernel import arch

        if not self.check_valid_num_columns(num_columns) or num_columns == 0:
            raise TraceError(f"TmemAllocator.allocate({num_columns!r}): num_columns must be multiple of 32 and power "
                             f"of two, and between 0 and {_MAX_COLUMNS} (rule: a tensor-memory allocation is a power "
                             f"of two of at least 32 columns)")
        if self._num_allocated_columns + num_columns > _MAX_COLUMNS:
            raise TraceError(f"TmemAllocator.allocate({num_columns}): {self._num_allocated_columns} columns are "
                             f"allocated already; total allocated columns must be less than or equal to "
                             f"{_MAX_COLUMNS} (rule: no tensor-memory overuse)")
        ptr = self._alloc_result_dst_smem_ptr
        self._in_allocator_warp(lambda: arch.alloc_tmem(num_columns, ptr, is_two_cta=self._is_two_cta), "allocate")
        self._num_allocated_columns += num_columns

    def wait_for_alloc(self, *, loc: Any = None, ip: Any = None) -> None:
        """Wait at barrier_for_retrieve until the allocator warp has allocated."""
        self._barrier_for_retrieve.arrive_and_wait()

    def retrieve_ptr(self, dtype: Any = None, *, loc: Any = None, ip: Any = None) -> Any:
        """The TMEM pointer (of dtype, Float32 by default) the allocation gave."""
        from ..kernel import arch
        from ..numeric import Float32

        return arch.retrieve_tmem_ptr(dtype or Float32, 16, self._alloc_result_dst_smem_ptr)

    def relinquish_alloc_permit(self, *, loc: Any = None, ip: Any = None) -> None:
        """The allocator warp gives up the CTA's permit to allocate."""
        from ..kernel import arch

        self._in_allocator_warp(lambda: arch.relinquish_tmem_alloc_permit(is_two_cta=self._is_two_cta),
                                "relinquish_alloc_permit")

    def free(self, tmem_ptr: Any, num_columns: int = 0, *, loc: Any = None, ip: Any = None) -> None:
        """The allocator warp frees num_columns columns from tmem_ptr (0: all allocated columns)."""
        from ..kernel import arch

        if num_columns > self._num_allocated_columns:
            raise TraceError(f"TmemAllocator.free(..., {num_columns}): num_columns must be less than or equal to "
                             f"num_allocated_columns ({self._num_allocated_columns})")
        if num_columns and not self.check_valid_num_columns(num_columns):
            raise TraceError(f"TmemAllocator.free(..., {num_columns}): num_columns is invalid (a power of two, a "
                             f"multiple of 32)")
        n = num_columns or self._num_allocated_columns
        if n == 0:
            raise TraceError("TmemAllocator.free: no columns are allocated")
        self._num_allocated_columns -= n

        def free() -> None:
            if self._is_two_cta:  # wait until the peer CTA is done with the pair's tensor memory too
                rank = arch.make_warp_uniform(arch.block_idx_in_cluster())
                arch.mbarrier_arrive(self._two_cta_tmem_dealloc_mbar_ptr, rank ^ 1 if isinstance(rank, int) else
                                     rank + 1 - 2 * (rank % 2))
                arch.mbarrier_wait(self._two_cta_tmem_dealloc_mbar_ptr, 0)
            arch.dealloc_tmem(tmem_ptr, n, is_two_cta=self._is_two_cta)

        self._in_allocator_warp(free, "free")
