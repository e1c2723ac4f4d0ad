"""``cutlass.utils`` names beyond cutelab.utils: ``HardwareInfo``, ``FastDivmodDivisor``, the static
persistent tile scheduler (``PersistentTileSchedulerParams``, ``StaticPersistentTileScheduler``,
``WorkTileInfo``); the names that cannot work yet raise NotEmulatedError when used.

>>> p = PersistentTileSchedulerParams((4, 3, 2), (1, 1, 1))
>>> StaticPersistentTileScheduler.get_grid_shape(p, max_active_clusters=10)
(1, 1, 10)
>>> divmod(17, FastDivmodDivisor(5))
(3, 2)
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass
from typing import Any, Dict

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

    def __post_init__(self, is_power_of_2: Any) -> None:
        if isinstance(self.divisor, int) and not isinstance(self.divisor, bool) and self.divisor <= 0:
            raise ValueError(f"FastDivmodDivisor({self.divisor}): the divisor must be positive")

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


@dataclass
class WorkTileInfo:
    """A tile's coordinate (m, n, l) and whether it is a tile of the problem."""

    tile_idx: Any
    is_valid_tile: Any


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


class StaticPersistentTileScheduler:
    """Each persistent cluster walks the tiles: start at its own index, step by the grid's size."""

    def __init__(self, params: PersistentTileSchedulerParams, num_persistent_clusters: Any, current_work_linear_idx: Any,
                 cta_id_in_cluster: Any) -> None:
        self.params = params
        self.num_persistent_clusters = num_persistent_clusters
        self._current_work_linear_idx = current_work_linear_idx
        self.cta_id_in_cluster = cta_id_in_cluster

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
        self._current_work_linear_idx = self._current_work_linear_idx + self.num_persistent_clusters * advance_count

    @property
    def num_tiles_executed(self) -> Any:
        return self._current_work_linear_idx // self.num_persistent_clusters


EXTRAS: Dict[str, Any] = {
    "HardwareInfo": HardwareInfo, "FastDivmodDivisor": FastDivmodDivisor, "WorkTileInfo": WorkTileInfo,
    "PersistentTileSchedulerParams": PersistentTileSchedulerParams,
    "StaticPersistentTileScheduler": StaticPersistentTileScheduler,
    **{n: refuse(f"cutlass.utils.{n}", "not in cutelab yet") for n in (
        "ClcDynamicPersistentTileScheduler", "ClcDynamicPersistentTileSchedulerParams", "SmemPartition",
        "TensorMapManager", "TensorMapUpdateMode", "create_initial_search_space")},
}
