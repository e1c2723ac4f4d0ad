"""``cutlass.cute.core`` / ``cute.tensor`` / ``cute.atom``: the DSL's
internal modules where its tensors, layouts and atoms are defined; in cutelab they are the
top-level names, so this module is cutelab's namespace under those names.

>>> make_layout((2, 3)).shape
(2, 3)
"""

from __future__ import annotations

from ..layout import *  # noqa: F401,F403
from ..algebra import *  # noqa: F401,F403
from ..swizzle import *  # noqa: F401,F403
from ..tensor import *  # noqa: F401,F403
from ..nvgpu.mma_atom import *  # noqa: F401,F403
from ..nvgpu.copy_atom import *  # noqa: F401,F403
from ..layout import make_layout  # noqa: F401
from ..tensor import Tensor, TensorSSA  # noqa: F401
from ..tensor import Tensor as _Tensor  # noqa: F401 - cute.tensor._Tensor: the DSL's tensor class (libraries patch it)
from ..nvgpu.copy_atom import CopyAtom, TiledCopy  # noqa: F401
from ..nvgpu.universal_copy import CopyOp  # noqa: F401 - cute.atom.CopyOp: the base of the SIMT copy ops
from ..nvgpu.mma_atom import MmaOp  # noqa: F401 - cute.atom.MmaOp: the base of the MMA ops


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    import cutelab

    return getattr(cutelab, name)
