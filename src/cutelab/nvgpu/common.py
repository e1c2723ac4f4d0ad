"""``cute.nvgpu.common``: the universal MMA and copy operations and the memory attributes of the
SIMT copies (``MemoryOrder``, ``MemoryScope``, ...), as CuTe DSL groups them.

>>> from cutelab.nvgpu import common
>>> common.MemoryScope.SYS
<MemoryScope.SYS>
"""

from .universal_mma import *  # noqa: F401,F403
from .universal_copy import *  # noqa: F401,F403
from .universal_copy import __all__ as _copy_all
from .universal_mma import __all__ as _mma_all

__all__ = list(_mma_all) + [n for n in _copy_all if n != "CopyOp"]
