"""``cutlass.utils.GroupedGemmTileSchedulerHelper``, ``StaticPersistentGroupTileScheduler`` and their
search state: which group of a grouped GEMM a persistent scheduler's linear tile index falls in, and
the CTA tile of that group.

CuTe DSL 4.8.1 searches the groups 32 at a time with a warp's prefix sum and carries the search's
state from one tile to the next. cutelab computes the same answer in each thread on its own: the
groups' cluster-tile counts ``ceil(m / cluster_tile_m) * ceil(n / cluster_tile_n)`` (read from the
problem-shape tensor in global memory) summed in order, the tile's group the first whose running sum
passes the index (``group_count`` is a compile-time constant, so the loop over groups is unrolled).
The M and N cluster-tile indices inside the group are column-major (``AlongM``), as the DSL's.
The search state holds nothing between tiles here (``create_initial_search_state`` gives an empty one).

``StaticPersistentGroupTileScheduler`` is the static persistent scheduler over the clusters of all
groups together (its params' l extent is their total): its work tiles (``GroupedWorkTileInfo``) carry
the search's answer, and a tile is valid while its linear index lies before the last group's end.
For a tile past the end the DSL reports group -1 and a problem shape of -1s; so does cutelab, and it
reads no problem shape for it. The DSL's cached problem shapes (``use_cached_problem_shapes``,
``prefetch_problem_shapes``) only change when the shapes are loaded, so here they change nothing.
"""

from __future__ import annotations

from typing import Any, List

from .dsl_utils import PersistentTileSchedulerParams, StaticPersistentTileScheduler, WorkTileInfo

__all__ = ["GroupSearchResult", "GroupedGemmGroupSearchState", "GroupedGemmTileSchedulerHelper",
           "GroupedWorkTileInfo", "StaticPersistentGroupTileScheduler", "create_initial_search_state"]


class GroupSearchResult:
    """The group of a tile and its CTA tile (group_idx, cta_tile_idx_m/n), the group's problem
    extents (problem_shape_m/n/k) and its number of K tiles (cta_tile_count_k)."""

    def __init__(self, group_idx: Any, cta_tile_idx_m: Any, cta_tile_idx_n: Any, problem_shape_m: Any,
                 problem_shape_n: Any, problem_shape_k: Any, cta_tile_count_k: Any) -> None:
        self.group_idx, self.cta_tile_idx_m, self.cta_tile_idx_n = group_idx, cta_tile_idx_m, cta_tile_idx_n
        self.problem_shape_m, self.problem_shape_n, self.problem_shape_k = problem_shape_m, problem_shape_n, problem_shape_k
        self.cta_tile_count_k = cta_tile_count_k

    def _fields(self) -> List[Any]:
        return [self.group_idx, self.cta_tile_idx_m, self.cta_tile_idx_n, self.problem_shape_m, self.problem_shape_n,
                self.problem_shape_k, self.cta_tile_count_k]

    def __extract_mlir_values__(self) -> List[Any]:
        return list(self._fields())

    def __new_from_mlir_values__(self, values: List[Any]) -> "GroupSearchResult":
        return GroupSearchResult(*values)


class GroupedGemmGroupSearchState:
    """CuTe DSL's search state (where the last search stopped). cutelab's search starts over for each
    tile, so it carries no values."""

    def __init__(self, start_group_idx: Any = 0, tile_count_prev_group: Any = 0, tile_count_searched: Any = 0,
                 found: Any = False) -> None:
        self.start_group_idx, self.tile_count_prev_group = start_group_idx, tile_count_prev_group
        self.tile_count_searched, self.found = tile_count_searched, found

    def __extract_mlir_values__(self) -> List[Any]:
        return []

    def __new_from_mlir_values__(self, values: List[Any]) -> "GroupedGemmGroupSearchState":
        return self


def create_initial_search_state() -> GroupedGemmGroupSearchState:
    return GroupedGemmGroupSearchState()


class GroupedGemmTileSchedulerHelper:
    """Turns a persistent scheduler's tile index (x, y, linear z) into a grouped GEMM's tile."""

    def __init__(self, group_count: int, tile_sched_params: Any, cluster_tile_shape_mnk: Any, search_state: Any) -> None:
        if isinstance(group_count, bool) or not isinstance(group_count, int) or group_count < 1:
            raise TypeError(f"GroupedGemmTileSchedulerHelper: group_count must be a positive int (a compile-time "
                            f"constant), got {group_count!r}")
        self.group_count = group_count
        self.tile_sched_params = tile_sched_params
        self.cluster_tile_shape_mnk = tuple(int(x) for x in cluster_tile_shape_mnk)
        self.search_state = search_state

    def __extract_mlir_values__(self) -> List[Any]:
        return []  # nothing changes from tile to tile

    def __new_from_mlir_values__(self, values: List[Any]) -> "GroupedGemmTileSchedulerHelper":
        return self

    def _search(self, linear_idx: Any, problem_shape_mnkl: Any) -> Any:
        """(group index, cluster tiles before that group) of linear_idx."""
        group, before, _ = _search_groups(self.group_count, self.cluster_tile_shape_mnk, linear_idx, problem_shape_mnkl)
        return group, before

    def delinearize_z(self, cta_tile_coord: Any, problem_shape_mnkl: Any) -> GroupSearchResult:
        from ..numeric import Int32

        linear = cta_tile_coord[2]
        group, before = self._search(linear, problem_shape_mnkl)
        m = problem_shape_mnkl[(group, 0)]
        n = problem_shape_mnkl[(group, 1)]
        k = problem_shape_mnkl[(group, 2)]
        cm, cn, ck = self.cluster_tile_shape_mnk
        count_m = (m + (cm - 1)) // cm
        idx = linear - before
        mi, ni = idx % count_m, idx // count_m
        ccm, ccn = self.tile_sched_params.cluster_shape_mn
        tile_m = mi * Int32(ccm) + cta_tile_coord[0]
        tile_n = ni * Int32(ccn) + cta_tile_coord[1]
        return GroupSearchResult(group, tile_m, tile_n, m, n, k, (k + (ck - 1)) // ck)

    def search_cluster_tile_count_k(self, cta_tile_coord: Any, problem_shape_mnkl: Any) -> Any:
        group, _ = self._search(cta_tile_coord[2], problem_shape_mnkl)
        k = problem_shape_mnkl[(group, 2)]
        ck = self.cluster_tile_shape_mnk[2]
        return (k + (ck - 1)) // ck, group


def _search_groups(group_count: int, cluster_tile_shape_mnk: Any, linear_idx: Any, problem_shape_mnkl: Any) -> Any:
    """(group index, cluster tiles before that group, cluster tiles of all groups) of linear_idx: the groups'
    cluster-tile counts summed in order, the group the first whose running sum passes linear_idx (group_count
    when none does)."""
    from ..numeric import Int32

    cm, cn, _ = cluster_tile_shape_mnk
    group = Int32(0)
    before = Int32(0)
    end = Int32(0)
    for g in range(group_count):
        m = problem_shape_mnkl[(g, 0)]
        n = problem_shape_mnkl[(g, 1)]
        end = end + ((m + (cm - 1)) // cm) * ((n + (cn - 1)) // cn)
        past = linear_idx >= end  # the tile lies past group g
        group = group + past.to(Int32)
        before = _select(past, end, before)
    return group, before, end


class GroupedWorkTileInfo(WorkTileInfo):
    """A work tile of StaticPersistentGroupTileScheduler: the tile's raw (x, y, linear z) coordinate, its
    validity and ``group_search_result`` (a GroupSearchResult)."""

    def __init__(self, tile_idx: Any, is_valid_tile: Any, group_search_result: GroupSearchResult) -> None:
        super().__init__(tile_idx, is_valid_tile)
        self.group_search_result = group_search_result

    def __repr__(self) -> str:
        return (f"GroupedWorkTileInfo(tile_idx={self.tile_idx!r}, is_valid_tile={self.is_valid_tile!r}, "
                f"group_idx={self.group_search_result.group_idx!r})")

    def __extract_mlir_values__(self) -> List[Any]:
        return super().__extract_mlir_values__() + self.group_search_result.__extract_mlir_values__()

    def __new_from_mlir_values__(self, values: List[Any]) -> "GroupedWorkTileInfo":
        n = len(values) - 7
        base = WorkTileInfo.__new_from_mlir_values__(self, list(values[:n]))
        return GroupedWorkTileInfo(base.tile_idx, base.is_valid_tile,
                                   self.group_search_result.__new_from_mlir_values__(list(values[n:])))


class StaticPersistentGroupTileScheduler(StaticPersistentTileScheduler):
    """The static persistent scheduler of a grouped GEMM: cluster z walks the linear cluster-tile indices of
    all groups (start at z, step by the number of persistent clusters), and each work tile names its group,
    the group's problem extents and the CTA tile inside it (column-major over the group's cluster tiles)."""

    def __init__(self, params: PersistentTileSchedulerParams, num_persistent_clusters: Any, current_work_linear_idx: Any,
                 cta_id_in_cluster: Any, cluster_tile_shape_mnk: Any, search_state: Any, group_count: int,
                 problem_shape_mnkl: Any, use_cached_problem_shapes: bool = False) -> None:
        if isinstance(group_count, bool) or not isinstance(group_count, int) or group_count < 1:
            raise TypeError(f"StaticPersistentGroupTileScheduler: group_count must be a positive int (a compile-time "
                            f"constant), got {group_count!r}")
        if len(tuple(cluster_tile_shape_mnk)) != 3:
            raise ValueError(f"StaticPersistentGroupTileScheduler: cluster_tile_shape_mnk must be (m, n, k), got "
                             f"{cluster_tile_shape_mnk!r}")
        super().__init__(params, num_persistent_clusters, current_work_linear_idx, cta_id_in_cluster)
        self.cluster_tile_shape_mnk = tuple(int(x) for x in cluster_tile_shape_mnk)
        self.search_state = search_state
        self.group_count = group_count
        self.problem_shape_mnkl = problem_shape_mnkl
        self.use_cached_problem_shapes = use_cached_problem_shapes

    @staticmethod
    def create(params: PersistentTileSchedulerParams, block_idx: Any, grid_dim: Any, cluster_tile_shape_mnk: Any,
               initial_search_state: Any, group_count: int, problem_shape_mnkl: Any,
               use_cached_problem_shapes: bool = False, *, loc: Any = None,
               ip: Any = None) -> "StaticPersistentGroupTileScheduler":
        cm, cn = params.cluster_shape_mn
        num = (grid_dim[0] * grid_dim[1] * grid_dim[2]) // (cm * cn)
        return StaticPersistentGroupTileScheduler(params, num, block_idx[2], (block_idx[0] % cm, block_idx[1] % cn, 0),
                                                  cluster_tile_shape_mnk, initial_search_state, group_count,
                                                  problem_shape_mnkl, use_cached_problem_shapes)

    def prefetch_problem_shapes(self, *, loc: Any = None, ip: Any = None) -> None:
        """The DSL's prefetch of the groups' shapes into registers: the search here reads them as it goes."""

    def delinearize_z(self, cta_tile_coord: Any, *, loc: Any = None, ip: Any = None) -> GroupedWorkTileInfo:
        """The work tile of the current linear index, whose raw coordinate is cta_tile_coord."""
        from ..numeric import Int32

        linear = self._current_work_linear_idx
        group, before, total = _search_groups(self.group_count, self.cluster_tile_shape_mnk, linear,
                                              self.problem_shape_mnkl)
        found = linear < total
        safe = _select(found, group, Int32(0))  # a tile past the end reads group 0's shape, then reports -1s
        none = Int32(-1)
        m, n, k = (_select(found, self.problem_shape_mnkl[(safe, i)], none) for i in range(3))
        cm, cn, ck = self.cluster_tile_shape_mnk
        count_m = _select(found, (m + (cm - 1)) // cm, Int32(1))
        idx = linear - before
        ccm, ccn = self.params.cluster_shape_mn
        tile_m = (idx % count_m) * Int32(ccm) + cta_tile_coord[0]
        tile_n = (idx // count_m) * Int32(ccn) + cta_tile_coord[1]
        count_k = _select(found, (k + (ck - 1)) // ck, none)
        result = GroupSearchResult(_select(found, group, none), tile_m, tile_n, m, n, k, count_k)
        return GroupedWorkTileInfo(cta_tile_coord, found, result)

    def get_current_work(self, *, loc: Any = None, ip: Any = None) -> GroupedWorkTileInfo:
        work = self._get_current_work_for_linear_idx(self._current_work_linear_idx)
        return self.delinearize_z(work.tile_idx)


def _select(c: Any, a: Any, b: Any) -> Any:
    from ..kernel.frontend.trace import where

    return where(c, a, b)
