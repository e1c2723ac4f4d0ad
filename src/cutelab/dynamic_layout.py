"""Marking a tensor's (flat) layout dynamic, as CuTe DSL's ``mark_layout_dynamic`` and
``mark_compact_shape_dynamic`` do: its extents and strides become runtime integers (``DynInt``)
that keep their values. The tensor's methods (``Tensor.mark_layout_dynamic``) and
``cute.runtime`` (``cutelab.runtime``) use these; they read and set ``t.layout`` only.

>>> import numpy as np
>>> from cutelab.runtime import from_dlpack
>>> print(mark_layout_dynamic(from_dlpack(np.zeros((16, 32), np.float32))).layout)
(?,?):(?{i64},1)
"""

from __future__ import annotations

from typing import Any

from .dynamic import DynInt, value_of
from .errors import TensorError
from .layout import Layout

__all__ = ["mark_layout_dynamic", "mark_compact_shape_dynamic"]


def flat_modes(t: Any, op: str) -> tuple:
    L = t.layout
    if not isinstance(L, Layout):
        raise TensorError(f"{op}: the tensor's layout {L} is not a plain Layout (a composed or swizzled layout "
                          f"cannot be marked dynamic)")
    shape = L.shape if isinstance(L.shape, tuple) else (L.shape,)
    stride = L.stride if isinstance(L.stride, tuple) else (L.stride,)
    if any(isinstance(s, tuple) for s in shape) or any(not isinstance(d, int) for d in stride):
        raise TensorError(f"{op}: the layout {value_of(L)} is not flat; only flat layouts (as from_dlpack makes "
                          f"them) can be marked dynamic")
    return shape, stride


def set_layout(t: Any, shape: tuple, stride: tuple) -> None:
    was_tuple = isinstance(t.layout.shape, tuple)
    t.layout = Layout(shape if was_tuple else shape[0], stride if was_tuple else stride[0])


def mark_layout_dynamic(t: Any, leading_dim: int | None = None) -> Any:
    """Make every extent and every stride of t's (flat) layout dynamic, but the stride of the
    leading dimension, which stays a static 1, as CuTe DSL does: a row-major (16,32) tensor then
    prints ``(?,?):(?{i64},1)``. Changes t in place and returns it.

    ``leading_dim`` (negative counts from the end) must have stride 1. Without it: the one mode of
    stride 1; among several, the one of extent > 1; none: every stride is dynamic.

    >>> import numpy as np
    >>> from cutelab.runtime import from_dlpack
    >>> print(mark_layout_dynamic(from_dlpack(np.zeros((16, 32), np.float32))).layout)
    (?,?):(?{i64},1)
    """
    from .numeric import Int64

    op = "mark_layout_dynamic" + ("" if leading_dim is None else f"(leading_dim={leading_dim})")
    shape, stride = flat_modes(t, op)
    vshape, vstride = value_of(shape), value_of(stride)
    r = len(shape)
    if leading_dim is not None:
        if isinstance(leading_dim, bool) or not isinstance(leading_dim, int) or not -r <= leading_dim < r:
            raise TensorError(f"{op}: leading_dim must be in range [0, {r}) or [-{r}, -1] for the layout "
                              f"{value_of(t.layout)}, got {leading_dim!r}")
        ld = leading_dim % r
        if vstride[ld] != 1:
            raise TensorError(f"{op}: the stride of mode {ld} of the layout {value_of(t.layout)} is {vstride[ld]}, "
                              f"but the leading dimension must have stride 1")
    else:
        ones = [i for i in range(r) if vstride[i] == 1]
        if len(ones) == 1:
            ld = ones[0]
        elif not ones:
            ld = None
        else:
            big = [i for i in ones if vshape[i] > 1]
            if len(big) != 1:
                why = "none has" if not big else "more than one has"
                raise TensorError(
                    f"{op}: cannot deduce the leading dimension of the layout {value_of(t.layout)} (modes {ones} "
                    f"have stride 1 but {why} extent > 1); give leading_dim= explicitly"
                )
            ld = big[0]
    new_shape = tuple(DynInt(s) for s in vshape)
    new_stride = tuple(1 if i == ld else DynInt(d, Int64) for i, d in enumerate(vstride))
    set_layout(t, new_shape, new_stride)
    return t


def mark_compact_shape_dynamic(t: Any, mode: int, stride_order: Any = None, divisibility: int = 1) -> Any:
    """Make the extent of one mode of t's (flat, compact up to padding) layout dynamic, with a
    known divisibility, and with it every stride that counts in units of it (the strides of the
    modes outside it in stride order), as CuTe DSL does: ``mode=1, divisibility=8`` on a row-major
    (16,32) tensor gives ``(16,?{div=8}):(?{i64 div=8},1)``. Changes t in place and returns it.

    ``stride_order`` lists the modes from the outermost to the innermost (torch's
    ``dim_order()``); without it, it is deduced from the strides, which needs exactly one mode of
    stride 1. Strides keep the tensor's own values (CuTe DSL recomputes static strides as compact
    products; cutelab keeps a padded tensor's real strides).

    >>> import numpy as np
    >>> from cutelab.runtime import from_dlpack
    >>> print(mark_compact_shape_dynamic(from_dlpack(np.zeros((16, 32), np.float32)), mode=0, divisibility=16).layout)
    (?{div=16},32):(32,1)
    """
    from .numeric import Int64

    op = f"mark_compact_shape_dynamic(mode={mode}" + (f", stride_order={stride_order}" if stride_order is not None
                                                        else "") + f", divisibility={divisibility})"
    shape, stride = flat_modes(t, op)
    vshape, vstride = value_of(shape), value_of(stride)
    r = len(shape)
    shown = value_of(t.layout)
    if isinstance(mode, bool) or not isinstance(mode, int) or not 0 <= mode < r:
        raise TensorError(f"{op}: mode must be in range [0, {r}) for the layout {shown}, got {mode!r}")
    if isinstance(divisibility, bool) or not isinstance(divisibility, int) or divisibility < 1:
        raise TensorError(f"{op}: divisibility must be a positive int, got {divisibility!r}")
    if vshape[mode] % divisibility:
        raise TensorError(f"{op}: the extent {vshape[mode]} of mode {mode} of the layout {shown} is not divisible "
                          f"by the divisibility {divisibility}")
    # the stride order, outermost first; ties between modes of extent 1 follow the given or natural order
    if stride_order is None:
        ones = [i for i in range(r) if vstride[i] == 1]
        if len(ones) != 1:
            raise TensorError(f"{op}: cannot deduce the stride order of the layout {shown} (it needs exactly one "
                              f"mode of stride 1, found {len(ones)}); give stride_order= explicitly")
        order = tuple(sorted(range(r), key=lambda i: (vstride[i], vshape[i]), reverse=True))
    else:
        order = tuple(stride_order)
        if len(order) != r:
            raise TensorError(f"{op}: stride_order must have {r} elements (one per mode of {shown}), got {len(order)}")
        for i in range(r):
            if i not in order:
                raise TensorError(f"{op}: stride_order must contain every mode of {shown}, but it lacks {i}")
    # compact up to padding: innermost stride 1, each stride at least the span of the modes inside it
    span = 1
    for i in reversed(order):
        if vshape[i] == 1:
            continue
        if vstride[i] < span or (span == 1 and vstride[i] != 1):
            raise TensorError(f"{op}: the layout {shown} is not compact in the stride order {order} (mode {i} has "
                              f"stride {vstride[i]}, expected {'1' if span == 1 else f'at least {span}'}); "
                              f"use mark_layout_dynamic for other layouts")
        span = vstride[i] * vshape[i]
    # the new extent, and the strides outside it: dynamic, divisible by the extents inside them
    new_shape = list(shape)
    new_shape[mode] = DynInt(vshape[mode], shape[mode].dtype if isinstance(shape[mode], DynInt) else None,
                             divisibility)
    new_stride = list(stride)
    dyn_inside, div = False, 1
    for i in reversed(order):
        if dyn_inside or isinstance(stride[i], DynInt):
            d = div if vstride[i] % div == 0 else 1
            new_stride[i] = DynInt(vstride[i], Int64, d)
        s = new_shape[i]
        if isinstance(s, DynInt):
            dyn_inside = True
            div *= s.div
        else:
            div *= s
    set_layout(t, tuple(new_shape), tuple(new_stride))
    return t
