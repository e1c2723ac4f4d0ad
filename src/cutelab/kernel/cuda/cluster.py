"""Cluster launches: ``cuLaunchKernelEx`` with the ``CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`` attribute.

A kernel launched with ``cluster=(cx, cy, cz)`` needs no ``__cluster_dims__`` in its source: the
cluster shape is a launch attribute. ``driver.Launcher(..., cluster=shape)`` calls
``launch_config`` once and then launches with ``cuLaunchKernelEx(config, fn, params, 0)``; only the
stream in the config changes between launches (``bind_stream``). A cluster of more than 8 CTAs also
needs the function's opt-in (``driver.allow_non_portable``). The call goes through
cuda.bindings (``CUTELAB_LAUNCH=ctypes`` is for plain launches only).
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["launch_config", "bind_stream"]

def launch_config(d: Any, grid: Sequence[int], block: Sequence[int], smem: int, cluster: Sequence[int],
                  cooperative: bool = False) -> Any:
    """A CUlaunchConfig for grid x block with smem bytes of dynamic shared memory and the cluster
    dimension attribute (d: the driver module, cuda.bindings.driver or fakegpu's); with cooperative,
    also ``CU_LAUNCH_ATTRIBUTE_COOPERATIVE`` (every CTA resident at once, as cudaLaunchCooperativeKernel)."""
    cfg = d.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = (int(v) for v in grid)
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = (int(v) for v in block)
    cfg.sharedMemBytes = int(smem)
    attr = d.CUlaunchAttribute()
    attr.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = (int(v) for v in cluster)
    attrs = [attr]
    if cooperative:
        co = d.CUlaunchAttribute()
        co.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
        co.value.cooperative = 1
        attrs.append(co)
    cfg.attrs = attrs
    cfg.numAttrs = len(attrs)
    return cfg


def bind_stream(d: Any, cfg: Any, stream: int) -> None:
    """Set the config's stream (a raw handle; 0 is the legacy default stream)."""
    mk = getattr(d, "CUstream", None)
    cfg.hStream = mk(stream) if mk is not None else stream
