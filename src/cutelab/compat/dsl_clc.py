"""``cutlass.utils.ClcDynamicPersistentTileScheduler`` and its params: the SM100 dynamic persistent
tile scheduler over cluster launch control (CLC), as CuTe DSL 4.8.1 has it.

The grid has one cluster per tile cluster of the problem (``get_grid_shape``). A cluster starts
on the tile of its own first CTA (``initial_work_tile_info``). For each next tile it asks the
hardware to cancel a cluster that has not started yet: the scheduler warp of its first CTA
issues ``cute.arch.issue_clc_query`` (``advance_to_next_work``). It then takes over that
cluster's tile, as ``get_current_work`` reads it from the answer (``cute.arch.clc_response``).
A failed query (no cluster left) makes the tile invalid and ends the loop. Tiles are the
cancelled cluster's first CTA's blockIdx plus this CTA's place in the cluster, rasterised along M
(swizzle_size 1), or along N as a linear index. On the CPU the interpreter's own scheduler answers
the queries (kernel/instr/clc.py).

Not here: swizzle_size > 1 and mixed cluster shapes (``fallback_cluster_shape_mnk``), refused.

>>> p = ClcDynamicPersistentTileSchedulerParams((4, 3, 2), (2, 1, 1))
>>> ClcDynamicPersistentTileScheduler.get_grid_shape(p)
(4, 3, 2)
>>> ClcDynamicPersistentTileSchedulerParams((4, 3, 2), (2, 1, 1), raster_along_m=False).get_grid_shape()
(2, 1, 12)
"""

from __future__ import annotations

from typing import Any, Tuple

from .where import refuse

__all__ = ["ClcDynamicPersistentTileSchedulerParams", "ClcDynamicPersistentTileScheduler"]


def _ceil_div(a: Any, b: int) -> Any:
    return -(-a // b)


def _runtime(v: Any, dtype: Any) -> Any:
    """v (an int or an index expression) as a runtime value in a register, as CuTe DSL's values are
    inside a kernel: the tile loops (``while work_tile.is_valid_tile``) carry the work tile, which
    the CLC answers replace, so it is a runtime value from the start."""
    from ..kernel.frontend.trace import TraceValue, current
    from ..kernel.ir.nodes import Assign

    if isinstance(v, TraceValue):
        return v
    t = current("ClcDynamicPersistentTileScheduler.initial_work_tile_info")
    r = t.new_reg(dtype, 1, mutable=True)
    t.emit(Assign(r, (0,), (v,)))
    return TraceValue([(r, 0)], (), dtype)


class ClcDynamicPersistentTileSchedulerParams:
    """The problem in tiles (m, n, l), the cluster shape and the raster order (see the module
    docstring)."""

    def __init__(self, problem_shape_ntile_mnl: Any, cluster_shape_mnk: Any, swizzle_size: int = 1,
                 raster_along_m: bool = True, *, fallback_cluster_shape_mnk: Any = None, loc: Any = None,
                 ip: Any = None) -> None:
        if not isinstance(cluster_shape_mnk, tuple) or len(cluster_shape_mnk) != 3:
            raise ValueError(f"ClcDynamicPersistentTileSchedulerParams: cluster_shape_mnk must be a tuple (m, n, k), "
                             f"got {cluster_shape_mnk!r}")
        if cluster_shape_mnk[2] != 1:
            raise ValueError(f"unsupported cluster_shape_k {cluster_shape_mnk[2]}")
        if swizzle_size < 1:
            raise ValueError(f"expect swizzle_size >= 1, but get {swizzle_size}")
        if swizzle_size != 1:
            refuse("ClcDynamicPersistentTileSchedulerParams(swizzle_size>1)",
                   "swizzled rasterisation is not in cutelab yet")()
        if fallback_cluster_shape_mnk is not None and tuple(fallback_cluster_shape_mnk) != tuple(cluster_shape_mnk):
            refuse("ClcDynamicPersistentTileSchedulerParams(fallback_cluster_shape_mnk=...)",
                   "mixed (preferred and fallback) cluster shapes are not in cutelab yet")()
        self.problem_shape_ntile_mnl = tuple(problem_shape_ntile_mnl)
        self._cluster_shape_mnk = tuple(cluster_shape_mnk)
        self.cluster_shape_mn = tuple(cluster_shape_mnk[:2])
        self.swizzle_size = swizzle_size
        self._raster_along_m = raster_along_m
        m, n, l = self.problem_shape_ntile_mnl
        self.clusters_mnl = (_ceil_div(m, cluster_shape_mnk[0]), _ceil_div(n, cluster_shape_mnk[1]), l)

    def get_grid_shape(self, *, loc: Any = None, ip: Any = None) -> Tuple[Any, Any, Any]:
        """One CTA per tile, the problem rounded up to whole clusters; rasterised along N: the
        clusters as one linear index in z."""
        cm, cn = self.cluster_shape_mn
        a, b, c = self.clusters_mnl
        if self._raster_along_m:
            return (a * cm, b * cn, c)
        return (cm, cn, a * b * c)


class ClcDynamicPersistentTileScheduler:
    """The scheduler of one CTA (see the module docstring)."""

    def __init__(self, params: ClcDynamicPersistentTileSchedulerParams, cta_id_in_cluster: Any,
                 num_tiles_executed: Any, clc_response_ptr: Any, block_idx: Any, insert_fence: bool = True):
        self.params = params
        self.cta_id_in_cluster = cta_id_in_cluster
        self._num_tiles_executed = num_tiles_executed
        self._clc_response_ptr = clc_response_ptr
        self._block_idx = block_idx
        self.insert_fence = insert_fence

    @staticmethod
    def create(params: ClcDynamicPersistentTileSchedulerParams, block_idx: Any, grid_dim: Any, clc_response_ptr: Any,
               insert_fence: bool = True, *, loc: Any = None, ip: Any = None) -> "ClcDynamicPersistentTileScheduler":
        from ..numeric import Int32

        if not isinstance(params, ClcDynamicPersistentTileSchedulerParams):
            raise TypeError(f"ClcDynamicPersistentTileScheduler.create: params must be "
                            f"ClcDynamicPersistentTileSchedulerParams, got {type(params).__name__}")
        bidx, bidy, _ = block_idx
        cm, cn = params.cluster_shape_mn
        cta = (bidx % cm if cm > 1 else 0, bidy % cn if cn > 1 else 0, 0)
        return ClcDynamicPersistentTileScheduler(params, cta, Int32(0), clc_response_ptr, tuple(block_idx),
                                                 insert_fence)

    @staticmethod
    def get_grid_shape(params: ClcDynamicPersistentTileSchedulerParams, *, loc: Any = None,
                       ip: Any = None) -> Tuple[Any, Any, Any]:
        return params.get_grid_shape()

    def _rasterize(self, x: Any, y: Any, z: Any) -> Tuple[Any, Any, Any]:
        """The tile of a cluster's first CTA (x, y, z of its blockIdx)."""
        p = self.params
        if p._raster_along_m:
            return x, y, z
        a, b, _ = p.clusters_mnl
        cm, cn = p.cluster_shape_mn
        cluster_n, rest = z % b, z // b
        cluster_m, batch = rest % a, rest // a
        return cluster_m * cm, cluster_n * cn, batch

    def _work(self, x: Any, y: Any, z: Any, valid: Any) -> Any:
        from .dsl_utils import WorkTileInfo

        m, n, l = self._rasterize(x, y, z)
        cx, cy, _ = self.cta_id_in_cluster
        return WorkTileInfo((m + cx, n + cy, l), valid)

    def work_tile_info_from_clc_response(self, result_addr: Any, *, loc: Any = None, ip: Any = None) -> Any:
        from ..kernel import arch

        m, n, l, valid = arch.clc_response(result_addr)
        if self.insert_fence:  # the next query (async proxy) must not overwrite the answer before this read
            arch.fence_proxy("async.shared", space="cta")
        return self._work(m, n, l, valid != 0)

    def get_current_work(self, *, loc: Any = None, ip: Any = None) -> Any:
        """The tile of the last answer (invalid if no cluster was left to cancel)."""
        return self.work_tile_info_from_clc_response(self._clc_response_ptr)

    def initial_work_tile_info(self, *, loc: Any = None, ip: Any = None) -> Any:
        """The tile of this CTA's own cluster."""
        from ..numeric import Boolean, Int32

        bidx, bidy, bidz = self._block_idx
        cx, cy, _ = self.cta_id_in_cluster
        w = self._work(bidx - cx, bidy - cy, bidz, True)
        return type(w)(tuple(_runtime(c, Int32) for c in w.tile_idx), _runtime(1, Boolean))

    def advance_to_next_work(self, mbarrier_addr: Any, *, loc: Any = None, ip: Any = None) -> None:
        """One elected thread asks to cancel the next cluster; the answer completes on mbarrier_addr."""
        from ..kernel import arch

        with arch.elect_one():
            arch.issue_clc_query(mbarrier_addr, self._clc_response_ptr)
        self._num_tiles_executed = self._num_tiles_executed + 1

    @property
    def num_tiles_executed(self) -> Any:
        return self._num_tiles_executed
