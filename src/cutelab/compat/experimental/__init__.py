"""``cutlass.experimental``: CuTe DSL 4.8.1's low-level API, as cutelab's compatibility layer
provides it.

- ``primitives`` (``wrappers.py``): the NVVM wrappers (``prims.elect_sync``,
  ``prims.mbarrier_init``, ...) with their enums (``enums.py``);
- ``memory.py``: ``cutlass.Array`` (``space=smem``/``rmem`` allocations in a kernel) and
  ``cutlass.Pointer`` (``tensor.iterator.raw_ptr()``), which the wrappers take;
- ``cuda``: the DSL's tensor-map helpers; not provided yet, each name raises NotEmulatedError.

The hook (``compat/hook.py``) maps ``cutlass.experimental``, ``cutlass.experimental.primitives``
and ``cutlass.experimental.cuda`` to the namespaces below.
"""

from __future__ import annotations

from typing import Any, Dict

from ..namespace import Namespace


def _primitives() -> Dict[str, Any]:
    from . import wrappers as p

    return p.namespace()


def _cuda() -> Dict[str, Any]:
    from ..where import refuse

    why = "cutlass.experimental.cuda's tensor maps are not in cutelab yet"
    names = ("TensorMap", "TensorMapDataFormat", "TensorMapSwizzle", "create_tensor_map_tiled",
             "create_tensor_map_tiled_from_view", "grid_constant", "initialize_cuda_context")
    return {n: refuse(f"cutlass.experimental.cuda.{n}", why) for n in names}


primitives = Namespace("cutlass.experimental.primitives", [], _primitives,
                       "cutlass.experimental.primitives (CuTe DSL's NVVM wrappers), as cutelab")
cuda = Namespace("cutlass.experimental.cuda", [], _cuda, "cutlass.experimental.cuda, as cutelab (not provided yet)")
experimental = Namespace("cutlass.experimental", [], dict, "cutlass.experimental, as cutelab")
experimental.__dict__["primitives"] = primitives
experimental.__dict__["cuda"] = cuda

__all__ = ["experimental", "primitives", "cuda"]
