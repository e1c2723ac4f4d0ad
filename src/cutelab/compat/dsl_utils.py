"""``cutlass.utils`` names beyond cutelab.utils: ``HardwareInfo``, ``FastDivmodDivisor``, the static
persistent tile scheduler (``PersistentTileSchedulerParams``, ``StaticPersistentTileScheduler``,
``WorkTileInfo``), the CLC dynamic one (dsl_clc.py); the names that cannot work yet raise
NotEmulatedError when used.

>>> p = PersistentTileSchedulerParams((4, 3, 2), (1, 1, 1))
>>> StaticPersistentTileScheduler.get_grid_shape(p, max_active_clusters=10)
(1, 1, 10)
>>> divmod(17, FastDivmodDivisor(5))
(3, 2)
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass
from typing import Any, Dict

from ..errors import not_yet
from .dsl_tensormap import TensorMapManager, TensorMapUpdateMode
from .where import refuse


class HardwareInfo:
    """The GPU's (or the emulated device's) SM count, L2 size and cluster occupancy."""

    def __init__(self, device_id: int = 0) -> None:
        self.device_id = device_id

    def _props(self) -> Any:
        from . import emulating

        if not emulating():
            from ..kernel.cuda.driver import gpu_available

            if gpu_available():
                import torch

                return torch.cuda.get_device_properties(self.device_id)
        from .device import DeviceProperties

        return DeviceProperties()

    def get_device_multiprocessor_count(self) -> int:
        return int(self._props().multi_processor_count)

    def get_l2_cache_size_in_bytes(self) -> int:
        return int(self._props().L2_cache_size)

    def get_max_active_clusters(self, cluster_size: int) -> int:
        """Clusters of cluster_size blocks that fit at once: the SM count divided by cluster_size
        (an upper bound of what cudaOccupancyMaxActiveClusters reports for a one-block-per-SM kernel)."""
        if cluster_size < 1:
            raise ValueError(f"HardwareInfo.get_max_active_clusters: cluster_size must be >= 1, got {cluster_size}")
        return self.get_device_multiprocessor_count() // int(cluster_size)


@dataclass
class FastDivmodDivisor:
    """A divisor for divmod(x, d), x // d and x % d (on the GPU the DSL uses multiply-shift; here the
    division itself, which gives the same answers). ``cute.FastDivmodDivisor`` and
    ``cutlass.utils.FastDivmodDivisor``; ``is_power_of_2`` is CuTe DSL's hint, which changes no answer."""

    divisor: Any
    is_power_of_2: InitVar[Any] = None
    loc: InitVar[Any] = None  # the DSL's source location and insertion point: no meaning here
    ip: InitVar[Any] = None

    def __post_init__(self, is_power_of_2: Any, loc: Any = None, ip: Any = None) -> None:
        if isinstance(self.divisor, int) and not isinstance(self.divisor, bool) and self.divisor <= 0:
            raise ValueError(f"FastDivmodDivisor({self.divisor}): the divisor must be positive")

    # CuTe DSL keeps the divisor's MLIR value apart (``_divisor_mlir``; ``_divisor`` before 4.8), and
    # libraries that subclass it carry that value across kernel boundaries (quack's FastDivmod, in its
    # __extract_mlir_values__/__new_from_mlir_values__). Here that value is the divisor itself.
    def _get_value(self) -> Any:
        return self.__dict__.get("divisor")

    def _set_value(self, v: Any) -> None:
        self.__dict__.setdefault("divisor", v)  # a divisor set by name (before or after) wins

    _divisor = property(_get_value, _set_value)
    _divisor_mlir = property(_get_value, _set_value)

    def __rdivmod__(self, x: Any) -> Any:
        return x // self.divisor, x % self.divisor

    def __rfloordiv__(self, x: Any) -> Any:
        return x // self.divisor

    def __rmod__(self, x: Any) -> Any:
        return x % self.divisor


class FastDivmodDivisorV2(FastDivmodDivisor):
    """``cute.FastDivmodDivisorV2``: FastDivmodDivisor whose ``divisor`` is readable in kernels (as here)."""


def fast_divmod_create_divisor(divisor: Any, is_power_of_2: Any = None, *, loc: Any = None,
                               ip: Any = None) -> FastDivmodDivisor:
    """``cute.fast_divmod_create_divisor``."""
    return FastDivmodDivisor(divisor, is_power_of_2)


def fast_divmod_create_divisor_v2(divisor: Any, is_power_of_2: Any = None, *, loc: Any = None,
                                  ip: Any = None) -> FastDivmodDivisorV2:
    """``cute.fast_divmod_create_divisor_v2``."""
    return FastDivmodDivisorV2(divisor, is_power_of_2)


class WorkTileInfo:
    """A tile's coordinate (m, n, l) and whether it is a tile of the problem.

    As CuTe DSL's, it keeps them in ``_tile_idx`` and ``_is_valid_tile`` (read-only properties
    ``tile_idx``, ``is_valid_tile``): flash_attn.cute's subclass (tile_scheduler.WorkTileInfo, four
    axes) rebuilds itself from those attributes in its ``__new_from_mlir_values__``."""

    def __init__(self, tile_idx: Any, is_valid_tile: Any) -> None:
        from ..numeric import Boolean, Int32

        def typed(x: Any) -> Any:  # a Python int coordinate is an Int32 value, so that it counts as one
            if isinstance(x, tuple):  # (cutlass.extract_mlir_values gives none for a Python int, as CuTe DSL)
                return tuple(typed(e) for e in x)
            return Int32(x) if type(x) is int else x

        self._tile_idx = typed(tile_idx)
        # as CuTe DSL's, the validity is a Boolean (a Python bool becomes one)
        self._is_valid_tile = Boolean(is_valid_tile) if type(is_valid_tile) is bool else is_valid_tile

    @property
    def tile_idx(self) -> Any:
        return self._tile_idx

    @property
    def is_valid_tile(self) -> Any:
        return self._is_valid_tile

    def __repr__(self) -> str:
        return f"WorkTileInfo(tile_idx={self._tile_idx!r}, is_valid_tile={self._is_valid_tile!r})"

    # CuTe DSL's value protocol: a runtime loop carries the tile's coordinate and validity (kernel/frontend/carry_obj)
    # (a nested coordinate, e.g. the FMHA scheduler's (m, 0, (b, h)), gives its leaves in order)
    def __extract_mlir_values__(self) -> list:
        from .. import int_tuple as it

        # (a None mode, quack's (m, n, None, l), gives no value, as CuTe DSL's extract_mlir_values)
        return [*(x for x in it.flatten_to_tuple(self.tile_idx) if x is not None), self.is_valid_tile]

    def __new_from_mlir_values__(self, values: list) -> "WorkTileInfo":
        it_ = iter(values)

        def build(x: Any) -> Any:
            if x is None:
                return None
            return tuple(build(e) for e in x) if isinstance(x, tuple) else next(it_)

        idx = build(self.tile_idx)
        return WorkTileInfo(idx, next(it_))


class PersistentTileSchedulerParams:
    """The problem in tiles (m, n, l) and the cluster shape, rasterised along m (or n)."""

    def __init__(self, problem_shape_ntile_mnl: Any, cluster_shape_mnk: Any, swizzle_size: int = 1,
                 raster_along_m: bool = True, *, loc: Any = None, ip: Any = None) -> None:
        if swizzle_size != 1:
            refuse("PersistentTileSchedulerParams(swizzle_size>1)", "swizzled rasterisation is not in cutelab yet")()
        m, n, l = problem_shape_ntile_mnl
        cm, cn = cluster_shape_mnk[0], cluster_shape_mnk[1]
        self.problem_shape_ntile_mnl = tuple(problem_shape_ntile_mnl)
        self.cluster_shape_mn = (cm, cn)
        self.raster_along_m = raster_along_m
        self.swizzle_size = swizzle_size
        self.clusters_mnl = (-(-m // cm), -(-n // cn), l)

    def total_clusters(self) -> Any:
        a, b, c = self.clusters_mnl
        return a * b * c


def _kernel_reg(value: Any) -> Any:
    """Inside a kernel: a mutable Int32 register holding value (an int or an index expression),
    assigned here; None outside one."""
    from ..kernel.frontend.trace import active

    t = active()
    if t is None:
        return None
    from ..kernel.ir.nodes import Assign
    from ..numeric import Int32

    r = t.new_reg(Int32, 1, mutable=True)
    t.emit(Assign(r, (0,), (value,)))
    return r


def _read(reg: Any) -> Any:
    """The register's value now (a copy: later assignments to it do not change it)."""
    from ..kernel.frontend.trace import TraceValue, current
    from ..kernel.ir.nodes import Compute

    t = current("StaticPersistentTileScheduler")
    dst = t.new_reg(reg.dtype, 1)
    t.emit(Compute(dst, "mov", (((reg, 0),),)))
    return TraceValue([(dst, 0)], (), reg.dtype)


class StaticPersistentTileScheduler:
    """Each persistent cluster walks the tiles: start at its own index, step by the grid's size.

    Inside a kernel the linear index is a runtime Int32 in a register, as in CuTe DSL:
    ``advance_to_next_work`` adds to it in place, so the tile loops (``while work_tile.is_valid_tile``)
    are runtime loops, each warp's own, and a warp's advances do not reach the others."""

    def __init__(self, params: PersistentTileSchedulerParams, num_persistent_clusters: Any, current_work_linear_idx: Any,
                 cta_id_in_cluster: Any) -> None:
        self.params = params
        self.num_persistent_clusters = num_persistent_clusters
        self._reg = _kernel_reg(current_work_linear_idx)
        self._linear = current_work_linear_idx if self._reg is None else None
        self.cta_id_in_cluster = cta_id_in_cluster

    @property
    def _current_work_linear_idx(self) -> Any:
        return self._linear if self._reg is None else _read(self._reg)

    @staticmethod
    def get_grid_shape(params: PersistentTileSchedulerParams, max_active_clusters: Any, *, loc: Any = None,
                       ip: Any = None) -> tuple:
        cm, cn = params.cluster_shape_mn
        total = params.total_clusters()
        return (cm, cn, min(total, max_active_clusters) if isinstance(total, int) and isinstance(
            max_active_clusters, int) else max_active_clusters)

    @staticmethod
    def create(params: PersistentTileSchedulerParams, block_idx: Any, grid_dim: Any, *, loc: Any = None,
               ip: Any = None) -> "StaticPersistentTileScheduler":
        cm, cn = params.cluster_shape_mn
        num = (grid_dim[0] // cm) * (grid_dim[1] // cn) * grid_dim[2]
        linear = block_idx[2]
        cta = (block_idx[0] % cm, block_idx[1] % cn)
        return StaticPersistentTileScheduler(params, num, linear, cta)

    def _get_current_work_for_linear_idx(self, linear: Any) -> WorkTileInfo:
        a, b, c = self.params.clusters_mnl
        if self.params.raster_along_m:
            cm_i, rest = linear % a, linear // a
            cn_i, l_i = rest % b, rest // b
        else:
            cn_i, rest = linear % b, linear // b
            cm_i, l_i = rest % a, rest // a
        cm, cn = self.params.cluster_shape_mn
        tile = (cm_i * cm + self.cta_id_in_cluster[0], cn_i * cn + self.cta_id_in_cluster[1], l_i)
        return WorkTileInfo(tile, linear < a * b * c)

    def get_current_work(self, *, loc: Any = None, ip: Any = None) -> WorkTileInfo:
        return self._get_current_work_for_linear_idx(self._current_work_linear_idx)

    def initial_work_tile_info(self, *, loc: Any = None, ip: Any = None) -> WorkTileInfo:
        return self.get_current_work()

    def advance_to_next_work(self, *, advance_count: int = 1, loc: Any = None, ip: Any = None) -> None:
        nxt = self._current_work_linear_idx + self.num_persistent_clusters * advance_count
        if self._reg is None:
            self._linear = nxt
            return
        from ..kernel.frontend.trace import current
        from ..kernel.ir.nodes import Assign
        from ..numeric import Int32

        t = current("StaticPersistentTileScheduler.advance_to_next_work")
        if not hasattr(nxt, "refs"):
            nxt = _read(_kernel_reg(nxt))
        t.emit(Assign(self._reg, (0,), nxt.to(Int32).refs if nxt.dtype is not Int32 else nxt.refs))

    @property
    def num_tiles_executed(self) -> Any:
        return self._current_work_linear_idx // self.num_persistent_clusters

    # no value protocol (CuTe DSL's __extract_mlir_values__): inside a kernel the index is already a mutable
    # register that advance_to_next_work assigns in place, so a runtime loop passes the scheduler through
    # (carry.Carry's "invoked" objects); outside one it is a Python value


class StaticPersistentRuntimeTileScheduler(StaticPersistentTileScheduler):
    """CuTe DSL's scheduler for grids that launch every SM and leave the real tile to the kernel: cluster z of
    the grid starts at linear index z and steps by the number of persistent clusters (size(grid_dim) / cluster
    size), as StaticPersistentTileScheduler; the linear index is cut into cluster-tile coordinates (m, n) of the
    problem with mode ``inner_mode`` (1: n, 0: m) fastest and the other unbounded, l is 0, and every tile is
    valid: the kernel (a grouped GEMM's group search) decides where the work ends."""

    def __init__(self, params: PersistentTileSchedulerParams, num_persistent_clusters: Any, current_work_linear_idx: Any,
                 cta_id_in_cluster: Any, inner_mode: int = 1) -> None:
        if inner_mode not in (0, 1):
            raise ValueError(f"inner_mode must be 0(for M mode) or 1(for N mode), but got {inner_mode}")
        super().__init__(params, num_persistent_clusters, current_work_linear_idx, cta_id_in_cluster)
        self.inner_mode = inner_mode

    @staticmethod
    def create(params: PersistentTileSchedulerParams, block_idx: Any, grid_dim: Any, inner_mode: int = 1, *,
               loc: Any = None, ip: Any = None) -> "StaticPersistentRuntimeTileScheduler":
        cm, cn = params.cluster_shape_mn
        num = (grid_dim[0] * grid_dim[1] * grid_dim[2]) // (cm * cn)
        return StaticPersistentRuntimeTileScheduler(params, num, block_idx[2], (block_idx[0] % cm, block_idx[1] % cn),
                                                    inner_mode)

    def _get_current_work_for_linear_idx(self, linear: Any) -> WorkTileInfo:
        a, b, _ = self.params.clusters_mnl
        if self.inner_mode == 1:
            tile = (linear // b, linear % b, 0)
        else:
            tile = (linear % a, linear // a, 0)
        return WorkTileInfo(tile, True)


EXTRAS: Dict[str, Any] = {
    "HardwareInfo": HardwareInfo, "StaticPersistentRuntimeTileScheduler": StaticPersistentRuntimeTileScheduler, "FastDivmodDivisor": FastDivmodDivisor, "WorkTileInfo": WorkTileInfo,
    "PersistentTileSchedulerParams": PersistentTileSchedulerParams,
    "StaticPersistentTileScheduler": StaticPersistentTileScheduler,
    # classes a program may subclass or name before it makes one (errors.not_yet: making one raises)
    **{n: not_yet(f"cutlass.utils.{n}") for n in ("SmemPartition",)},
    **{n: refuse(f"cutlass.utils.{n}", "not in cutelab yet") for n in ("create_initial_search_space",)},
}


EXTRAS["TensorMapManager"] = TensorMapManager  # descriptors in memory (kernel/instr/tensormap.py)
EXTRAS["TensorMapUpdateMode"] = TensorMapUpdateMode
