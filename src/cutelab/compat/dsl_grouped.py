"""``cutlass.utils.GroupedGemmTileSchedulerHelper`` and its search state: which group of a grouped
GEMM a persistent scheduler's linear tile index falls in, and the CTA tile of that group.

CuTe DSL 4.8.1 searches the groups 32 at a time with a warp's prefix sum and carries the search's
state from one tile to the next. cutelab computes the same answer in each thread on its own: the
groups' cluster-tile counts ``ceil(m / cluster_tile_m) * ceil(n / cluster_tile_n)`` (read from the
problem-shape tensor in global memory) summed in order, the tile's group the first whose running sum
passes the index (``group_count`` is a compile-time constant, so the loop over groups is unrolled).
The M and N cluster-tile indices inside the group are column-major (``AlongM``), as the DSL's.
The search state holds nothing between tiles here (``create_initial_search_state`` gives an empty one).
"""

from __future__ import annotations

from typing import Any, List

__all__ = ["GroupSearchResult", "GroupedGemmGroupSearchState", "GroupedGemmTileSchedulerHelper",
           "create_initial_search_state"]


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
        from ..numeric import Int32

        cm, cn, _ = self.cluster_tile_shape_mnk
        group = Int32(0)
        before = Int32(0)
        end = Int32(0)
        for g in range(self.group_count):
            m = problem_shape_mnkl[(g, 0)]
            n = problem_shape_mnkl[(g, 1)]
            end = end + ((m + (cm - 1)) // cm) * ((n + (cn - 1)) // cn)
            past = linear_idx >= end  # the tile lies past group g
            group = group + past.to(Int32)
            before = _select(past, end, before)
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


def _select(c: Any, a: Any, b: Any) -> Any:
    from ..kernel.frontend.trace import where

    return where(c, a, b)
