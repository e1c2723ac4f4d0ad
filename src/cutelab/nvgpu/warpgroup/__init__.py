"""Warpgroup-level atoms: SM90 ``wgmma`` ops and the shared-memory layout atoms they read.

``fence``, ``commit_group`` and ``wait_group`` are kernel ops (cutelab.kernel.instr.wgmma), reached
through cutelab.tracing.instruction: the atoms do not import the kernel.

May import: what ``cutelab.nvgpu`` may (the core and its protocols) and ``nvgpu``'s atom modules (``universal_copy``, ``universal_mma``, ``copy_atom``, ``mma_atom``).
Never ``cutelab.kernel`` or ``cutelab.render``.
"""

from .mma import *  # noqa: F401,F403
from .helpers import *  # noqa: F401,F403
from ...tracing import instruction as _instruction


def fence(*, loc=None, ip=None) -> None:
    """``wgmma.fence.sync.aligned`` inside a kernel (see cutelab.kernel.instr.wgmma.fence)."""
    _instruction("wgmma.fence", "cute.nvgpu.warpgroup.fence()")()


def commit_group(*, loc=None, ip=None) -> None:
    """``wgmma.commit_group.sync.aligned`` inside a kernel."""
    _instruction("wgmma.commit_group", "cute.nvgpu.warpgroup.commit_group()")()


def wait_group(group, *, loc=None, ip=None) -> None:
    """``wgmma.wait_group.sync.aligned N`` inside a kernel."""
    _instruction("wgmma.wait_group", "cute.nvgpu.warpgroup.wait_group()")(group)
