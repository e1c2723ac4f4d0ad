"""``cutlass.experimental``: CuTe DSL 4.8.1's low-level API, as cutelab's compatibility layer
provides it.

- ``primitives`` (``wrappers.py``): the NVVM wrappers (``prims.elect_sync``,
  ``prims.mbarrier_init``, ...) with their enums (``enums.py``), ``ldmatrix``/``stmatrix`` in
  ``matrix.py``, the tensor-memory wrappers (``tcgen05_alloc``, ``make_tmem_ptr``, ``TmemAddr``,
  ``tcgen05_ld``, ...) in ``tcgen05.py``, the descriptor-level UMMA (``Tcgen05SmemDesc``,
  ``Tcgen05InstrDesc``, ``tcgen05_mma``, ``tcgen05_commit``) in ``tcgen05_mma.py``;
- ``memory.py``: ``cutlass.Array`` (``space=smem``/``rmem`` allocations in a kernel) and
  ``cutlass.Pointer`` (``tensor.iterator.raw_ptr()``), which the wrappers take;
- ``cuda`` (``tensor_map.py``): the DSL's tensor maps (``create_tensor_map_tiled``, ``TensorMap``), which
  the TMA primitives take;
- ``cute_experimental`` (``cutlass.cute.experimental``): the tensor-level API whose copies bound themselves
  (``auto_bounds.py``: ``kernel``, ``partition``, ``copy``, ``allocate``, ...) and its ``iket`` tracing
  markers, which record nothing here.

The hook (``compat/hook.py``) maps ``cutlass.experimental``, ``cutlass.experimental.primitives``
and ``cutlass.experimental.cuda`` to the namespaces below.

May import: any of cutelab, as ``cutelab.compat`` may (the kernel's tracer and instructions, tensors,
the pipelines, ``utils``). Nothing outside ``compat`` imports it.
"""

from __future__ import annotations

from typing import Any, Dict

from ..namespace import Namespace


def _primitives() -> Dict[str, Any]:
    from . import matrix, tcgen05, tcgen05_cp, tcgen05_mma
    from . import wrappers as p

    ns = p.namespace()
    ns.update(ldmatrix=matrix.ldmatrix, stmatrix=matrix.stmatrix)  # the m8n8 b16 forms (matrix.py: built on shfl_sync)
    ns.update(tcgen05.namespace())  # tensor-memory allocation, addresses and the 32x32b load (tcgen05.py)
    ns.update(tcgen05_mma.namespace())  # the descriptors, tcgen05_mma and tcgen05_commit (tcgen05_mma.py)
    ns.update(tcgen05_cp.namespace())  # the descriptor-driven shared -> tensor memory copy (tcgen05_cp.py)
    return ns


def _cuda() -> Dict[str, Any]:
    from . import tensor_map

    return tensor_map.namespace()


def _iket() -> Dict[str, Any]:
    """IKET (in-kernel event tracing) markers: they time regions of a kernel when the DSL's event tracing is
    compiled in, and change no result. cutelab records no trace: the markers are accepted and emit nothing."""

    def range_push(event_name: str, payload: Any = None, *, loc: Any = None, ip: Any = None) -> None:
        """Opens a traced region (cutelab records no trace)."""

    def range_pop(*, loc: Any = None, ip: Any = None) -> None:
        """Closes the latest traced region (cutelab records no trace)."""

    def mark(event_name: str, payload: Any = None, *, loc: Any = None, ip: Any = None) -> None:
        """Marks a traced event (cutelab records no trace)."""

    return {"range_push": range_push, "range_pop": range_pop, "mark": mark}


primitives = Namespace("cutlass.experimental.primitives", [], _primitives,
                       "cutlass.experimental.primitives (CuTe DSL's NVVM wrappers), as cutelab")
cuda = Namespace("cutlass.experimental.cuda", [], _cuda, "cutlass.experimental.cuda (tensor maps), as cutelab")
experimental = Namespace("cutlass.experimental", [], dict, "cutlass.experimental, as cutelab")
experimental.__dict__["primitives"] = primitives
experimental.__dict__["cuda"] = cuda
iket = Namespace("cutlass.cute.experimental.iket", [], _iket,
                 "cutlass.cute.experimental.iket (in-kernel event tracing markers; cutelab records no trace)")
def _cute_experimental() -> Dict[str, Any]:
    from . import auto_bounds

    return dict(auto_bounds.namespace(), iket=iket)


cute_experimental = Namespace("cutlass.cute.experimental", [], _cute_experimental,
                              "cutlass.cute.experimental, as cutelab (its kernels with automatic bounds, "
                              "partition, copy, allocate; its iket markers)")

__all__ = ["experimental", "primitives", "cuda", "cute_experimental", "iket"]
