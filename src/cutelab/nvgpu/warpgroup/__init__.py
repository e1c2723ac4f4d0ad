"""Warpgroup-level atoms: SM90 ``wgmma`` ops and the shared-memory layout atoms they read.

``fence``, ``commit_group`` and ``wait_group`` are kernel ops (cutelab.kernel.instr.wgmma)."""

from .mma import *  # noqa: F401,F403
from .helpers import *  # noqa: F401,F403


def fence(*, loc=None, ip=None) -> None:
    """``wgmma.fence.sync.aligned`` inside a kernel (see cutelab.kernel.instr.wgmma.fence)."""
    from ...kernel.instr.wgmma import fence as f

    f()


def commit_group(*, loc=None, ip=None) -> None:
    """``wgmma.commit_group.sync.aligned`` inside a kernel."""
    from ...kernel.instr.wgmma import commit_group as f

    f()


def wait_group(group, *, loc=None, ip=None) -> None:
    """``wgmma.wait_group.sync.aligned N`` inside a kernel."""
    from ...kernel.instr.wgmma import wait_group as f

    f(group)
