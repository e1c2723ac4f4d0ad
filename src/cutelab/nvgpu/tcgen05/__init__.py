"""Blackwell (SM100) atoms, named as ``cutlass.cute.nvgpu.tcgen05``: the UMMA ops (``mma``), their
tensor-memory and descriptor fragments (``tmem``), the shared-memory layout atoms (``helpers``)
and the tensor-memory copy ops (``copy``). Layout algebra only: the kernel side is elsewhere."""

from .mma import *  # noqa: F401,F403
from .tmem import TmemEngine, SmemDescEngine  # noqa: F401
