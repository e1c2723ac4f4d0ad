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


def _pack_shape(shape: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """CuTe DSL's ``core._pack_shape``: a shape as one IR value; in cutelab a shape is its tuple (checked)."""
    return _packed("_pack_shape", shape, allow_layouts=False)


def _pack_tile(tile: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """CuTe DSL's ``core._pack_tile``: a tiler (ints, layouts, None) as one IR value; in cutelab the tuple."""
    return _packed("_pack_tile", tile, allow_layouts=True)


def _pack_coord(coord: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """CuTe DSL's ``core._pack_coord``: in cutelab the coordinate tuple (checked)."""
    return _packed("_pack_coord", coord, allow_layouts=False, allow_none=True)


def _packed(what: str, x: Any, allow_layouts: bool, allow_none: bool = False) -> Any:
    from ..errors import LayoutError
    from ..layout import Layout as _Layout

    def ok(e: Any) -> bool:
        if isinstance(e, tuple):
            return all(ok(a) for a in e)
        if e is None:
            return allow_none or allow_layouts
        if isinstance(e, _Layout):
            return allow_layouts
        return not isinstance(e, (bool, float, str))

    if not ok(x):
        raise LayoutError(f"cute.core.{what}({x!r}): expected a tuple of ints"
                          + (", layouts or None" if allow_layouts else "") + " (its leaves)")
    return x
