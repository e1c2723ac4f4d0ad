"""``launch(cluster=...)``: the thread-block cluster shape of a launch, checked as the GPU would.

A cluster is a group of CTAs (thread blocks) that the hardware runs at the same time on one GPC:
they may read and write each other's shared memory (``cute.arch.map_dsmem_ptr``), arrive on each
other's mbarriers and wait for each other (``cute.arch.cluster_arrive``/``cluster_wait``). The
grid is tiled by clusters: every grid dimension must be a multiple of the cluster's, and a
cluster may hold at most 16 CTAs: 8 is the portable limit; above it the kernel needs the
non-portable opt-in (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED), which CuTe DSL sets on
every kernel and cutelab's GPU launch sets for such a cluster (cuda/driver.py); Hopper runs 16.

>>> cluster_shape("k", (2, 1), (4, 2, 1))
(2, 1, 1)
>>> cluster_shape("k", None, (4, 2, 1))
(1, 1, 1)
>>> cluster_shape("k", (3, 1, 1), (4, 1, 1), where="prog.py:9")
Traceback (most recent call last):
...
cutelab.errors.LaunchError: k.launch (at prog.py:9): the grid (4, 1, 1) is not a whole number of clusters (3, 1, 1): grid dimension x (4) is not a multiple of 3
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from ...errors import LaunchError

__all__ = ["cluster_shape", "fallback_cluster_shape", "MAX_PORTABLE_CLUSTER", "MAX_CLUSTER"]

MAX_PORTABLE_CLUSTER = 8  # CTAs in a cluster every SM90/SM100 part launches without the non-portable opt-in
MAX_CLUSTER = 16  # with it (H100, B200), as CuTe DSL launches


def _dim(v: Any) -> Any:
    """An int from an int-like value (Int32(2), numpy ints, a DynInt's static value); None otherwise."""
    if isinstance(v, bool):
        return None
    try:
        import numbers

        if isinstance(v, numbers.Integral):
            return int(v)
    except Exception:  # pragma: no cover
        pass
    val = getattr(v, "value", None)
    if isinstance(val, int) and not isinstance(val, bool):
        return val
    return None


def cluster_shape(name: str, cluster: Any, grid: Tuple[int, int, int], where: Optional[str] = None) -> Tuple[int, int, int]:
    """The (x, y, z) cluster shape of a launch of kernel ``name`` over ``grid`` (None: (1, 1, 1));
    a LaunchError naming the kernel, the call's line and the failed condition otherwise."""
    at = f" (at {where})" if where else ""
    if cluster is None:
        return (1, 1, 1)
    try:
        dims = list(cluster) if isinstance(cluster, (tuple, list)) else [cluster]
    except TypeError:
        dims = [cluster]
    vals = [_dim(d) for d in dims]
    if not 1 <= len(vals) <= 3 or any(v is None or v < 1 for v in vals):
        raise LaunchError(f"{name}.launch{at}: cluster={cluster!r} must be 1 to 3 positive static integers "
                          f"(the cluster shape in CTAs, e.g. (2, 1, 1))")
    shape = tuple(vals + [1] * (3 - len(vals)))
    size = shape[0] * shape[1] * shape[2]
    if size > MAX_CLUSTER:
        raise LaunchError(f"{name}.launch{at}: cluster {shape} has {size} CTAs; at most {MAX_CLUSTER} are supported "
                          f"({MAX_PORTABLE_CLUSTER}, the portable cluster size, and up to {MAX_CLUSTER} with the "
                          f"non-portable opt-in that CuTe DSL and cutelab make)")
    for a, g, c in zip("xyz", grid, shape):
        if g % c:
            raise LaunchError(f"{name}.launch{at}: the grid {tuple(grid)} is not a whole number of clusters "
                              f"{shape}: grid dimension {a} ({g}) is not a multiple of {c}")
    return shape  # type: ignore[return-value]


def fallback_cluster_shape(name: str, fallback: Any, preferred: Tuple[int, int, int], grid: Tuple[int, int, int],
                           where: Optional[str] = None) -> Tuple[int, int, int]:
    """The fallback cluster shape of an SM100 launch with preferred clusters (``launch(cluster=
    preferred, fallback_cluster=fallback)``), checked: a cluster shape of the grid, of the preferred
    cluster's depth, dividing the preferred shape. cutelab runs every cluster with the preferred
    shape, which the GPU may also do.

    >>> fallback_cluster_shape("k", (2, 1, 1), (2, 4, 1), (4, 8, 1))
    (2, 1, 1)
    >>> fallback_cluster_shape("k", (2, 3, 1), (2, 4, 1), (4, 12, 1))
    Traceback (most recent call last):
    ...
    cutelab.errors.LaunchError: k.launch: the fallback cluster (2, 3, 1) does not divide the preferred cluster (2, 4, 1)
    """
    at = f" (at {where})" if where else ""
    fb = cluster_shape(name, fallback, grid, where)
    if fb[2] != preferred[2]:
        raise LaunchError(f"{name}.launch{at}: the fallback cluster {fb} and the preferred cluster {preferred} must "
                          f"have the same depth (z)")
    if any(p % f for p, f in zip(preferred, fb)):
        raise LaunchError(f"{name}.launch{at}: the fallback cluster {fb} does not divide the preferred cluster "
                          f"{preferred}")
    return fb
