"""SM80 ``cp.async``: asynchronous copies from global to shared memory, as
``cutlass.cute.nvgpu.cpasync`` names them.

>>> import cutelab as cute
>>> from cutelab.nvgpu import cpasync
>>> a = cute.make_copy_atom(cpasync.CopyG2SOp(), cute.Float16, num_bits_per_copy=128)
>>> print(a.layout_src_tv, a.op)
(1,8):(0,1) cp.async GMEM -> SMEM copy Operation
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...numeric import Numeric
from ..universal_copy import CopyOp, LoadCacheMode, _reject, _simt_layouts

__all__ = ["CopyG2SOp", "CopyBulkG2SOp", "CopyDsmemStoreOp", "LoadCacheMode"]

# cutlass.cute.nvgpu.cpasync.LoadCacheMode is a deprecated twin of cute.nvgpu.LoadCacheMode;
# cutelab has one enum under both names.


@dataclass(frozen=True)
class CopyG2SOp(CopyOp):
    """Non-bulk asynchronous copy, global -> shared memory (``cp.async.ca/.cg``).

    ``make_copy_atom(CopyG2SOp(cache_mode), dtype, num_bits_per_copy=n)`` needs n > 0: each
    thread copies n bits.
    """

    cache_mode: LoadCacheMode = LoadCacheMode.ALWAYS

    def __post_init__(self) -> None:
        if not isinstance(self.cache_mode, LoadCacheMode):
            raise ValueError(
                f"CopyG2SOp(cache_mode={self.cache_mode!r}): expects the 'cache_mode' Op parameter to be a LoadCacheMode"
            )

    def __str__(self) -> str:
        s = "cp.async GMEM -> SMEM copy Operation"
        if self.cache_mode is not LoadCacheMode.ALWAYS:
            s += f"\n  with cache mode = {self.cache_mode}"
        return s

    def _atom_layouts(self, value_type: Numeric, num_bits_per_copy: Any = None, **kwargs: Any) -> dict:
        _reject(self, kwargs, ())
        return _simt_layouts(self, value_type, num_bits_per_copy, positive=True)


@dataclass(frozen=True)
class CopyDsmemStoreOp(CopyOp):
    """Asynchronous store from registers into a peer CTA's shared memory (``st.async``), completing
    on an mbarrier of that CTA: ``cute.copy(atom, src, dst, mbar_ptr=...)`` with dst a tensor over
    ``cute.arch.map_dsmem_ptr`` (kernel/instr/cluster.py). ``num_bits_per_copy``: 0 (one element
    per store), 32, 64 or 128.
    """

    def __str__(self) -> str:
        return "st.async RMEM -> DSMEM copy Operation"

    def _atom_layouts(self, value_type: Numeric, num_bits_per_copy: Any = 0, **kwargs: Any) -> dict:
        _reject(self, kwargs, ("num_bits_per_copy",))
        if num_bits_per_copy not in (0, 32, 64, 128) or isinstance(num_bits_per_copy, bool):
            raise ValueError(f"make_copy_atom(CopyDsmemStoreOp(), {value_type}): expects a 'num_bits_per_copy' kw "
                             f"argument that is one of {{0, 32, 64, 128}}, got {num_bits_per_copy!r}")
        return _simt_layouts(self, value_type, num_bits_per_copy or value_type.width)



@dataclass(frozen=True)
class CopyBulkG2SOp(CopyOp):
    """Non-tensor bulk copy, global -> shared memory (``cp.async.bulk.shared::cluster.global.mbarrier::
    complete_tx::bytes``, SM90): ``cute.copy(atom, gmem, smem, mbar_ptr=bar)`` moves the whole
    source, contiguous in both memories (a multiple of 16 bytes, 16-byte aligned), and completes its
    bytes on the mbarrier. The copy is not elected: every thread that runs it issues one (quack wraps
    it in ``elect_one``). ``num_bits_per_copy`` is taken and not used, as in CuTe DSL.
    """

    def __str__(self) -> str:
        return "cp.async GMEM -> SMEM bulk copy Operation"

    def _atom_layouts(self, value_type: Numeric, num_bits_per_copy: Any = 0, **kwargs: Any) -> dict:
        _reject(self, kwargs, ("num_bits_per_copy",))
        if not isinstance(num_bits_per_copy, int) or isinstance(num_bits_per_copy, bool) or num_bits_per_copy < 0:
            raise ValueError(f"make_copy_atom(CopyBulkG2SOp(), {value_type}): expects a 'num_bits_per_copy' kw argument "
                             f"of type int that is positive, got {num_bits_per_copy!r}")
        return _simt_layouts(self, value_type, 0)
