"""The protocol between cutelab's core and its kernel compiler: the core asks it, the kernel
(``cutelab.kernel``) implements it when it is imported. This module imports nothing of cutelab but
its errors, and no module below the kernel tests module names or reads ``sys.modules`` to find
the kernel.

- ``TracedValue``, ``SymbolicIndex``: abstract classes that the kernel registers its classes
  with (a value computed inside a traced kernel, whose ``as_index()`` gives it as an index; a
  symbolic integer of the tracer, known only at run time), so that ``isinstance`` works
  without the kernel;
- ``hooks``: what the core delegates while a kernel is traced. Until the kernel installs them
  (``install``), nothing is being traced and the defaults answer so.
- ``instruction(name)``: the kernel's function for an instruction CuTe DSL names in an atoms'
  namespace (``cute.nvgpu.warpgroup.fence`` is ``instruction("wgmma.fence")``).

>>> from cutelab import tracing
>>> tracing.hooks.kernel_tracing(), isinstance(3, tracing.SymbolicIndex)
(False, False)
"""

from __future__ import annotations

import abc
from typing import Any, Callable, Optional

__all__ = ["TracedValue", "SymbolicIndex", "hooks", "install", "instruction"]


class _KernelABCMeta(abc.ABCMeta):
    """ABCMeta that answers for a runtime value's class (numeric.RuntimeTypeMeta, marked by
    ``_dsl_class_`` in its dict) by its own bases, without the ABC's caches: such a class equals and
    hashes as its DSL class (``type(v) == Float32``), so the caches (sets of weakly held classes,
    matched by equality) would give one the other's answer (a Float32 value taken for a traced one)."""

    def __subclasscheck__(cls, sub: Any) -> bool:
        if isinstance(sub, type) and "_dsl_class_" in sub.__dict__:
            return any(issubclass(b, cls) for b in sub.__mro__[1:])
        return super().__subclasscheck__(sub)

    def __instancecheck__(cls, inst: Any) -> bool:
        t = type(inst)
        if "_dsl_class_" in t.__dict__:
            return cls.__subclasscheck__(t)
        return super().__instancecheck__(inst)


class TracedValue(metaclass=_KernelABCMeta):
    """A value computed inside a traced kernel (the kernel's TraceValue); ``as_index()`` gives
    an integer one as a SymbolicIndex."""


class SymbolicIndex(metaclass=_KernelABCMeta):
    """A symbolic integer of the kernel tracer: an index known only when the kernel runs."""


def _false() -> bool:
    return False


class _Hooks:
    """What the kernel installs (see ``install``); the defaults are what holds with no kernel."""

    kernel_tracing: Callable[[], bool] = staticmethod(_false)  # a @cute.kernel body is being traced
    in_runtime_branch: Callable[[], bool] = staticmethod(_false)  # the kernel's trace is inside a runtime if's branch
    host_tracing: Callable[[], bool] = staticmethod(_false)  # a @cute.jit body (outside kernels) is
    host_scalar: Optional[Callable[..., Any]] = None  # (dtype, value) -> its runtime value in a @cute.jit body, or None
    rmem_tensor: Optional[Callable[..., Any]] = None  # (layout, dtype) -> a register Tensor, or None
    print_tensor: Optional[Callable[..., bool]] = None  # (tensor, verbose=) -> True if printed in a kernel
    full_like: Optional[Callable[..., Any]] = None  # (traced value, fill, dtype) -> traced value
    smem_view: Optional[Callable[..., Any]] = None  # (pointer, ComposedLayout) -> swizzled smem Tensor, or None
    recast_smem_ptr: Optional[Callable[..., Any]] = None  # (pointer, swizzle, dtype) -> a swizzled smem pointer, or None
    swizzle_index: Optional[Callable[..., Any]] = None  # (index expression, b, m, s) -> Swizzle<b,m,s> of it (address bits)
    fold_bool: Optional[Callable[..., Any]] = None  # (traced value, "and"/"or") -> its elements combined (all_/any_)
    value_as: Optional[Callable[..., Any]] = None  # (traced value, shape, dtype) -> TensorSSA(value, shape, dtype) in a kernel
    copy: Optional[Callable[..., Any]] = None  # cute.copy inside a kernel
    gemm: Optional[Callable[..., Any]] = None  # cute.gemm inside a kernel
    mma_field: Optional[Callable[..., Any]] = None  # (atom, field, value, get) -> an atom's runtime field in a kernel, or NotImplemented
    index_value: Optional[Callable[..., Any]] = None  # (symbolic index, Int32/Int64) -> the traced value holding it
    instruction: Optional[Callable[[str], Callable[..., Any]]] = None  # name -> the kernel's function (see instruction)
    raw_pointer: Optional[Callable[..., Any]] = None  # (Pointer) -> CuTe DSL's cutlass.Pointer of it (the compat layer's)
    runtime_layout: Optional[Callable[..., Any]] = None  # (shape, stride) -> a layout with runtime entries in a kernel, or None
    runtime_tensor: Optional[Callable[..., Any]] = None  # (pointer, layout) -> a tensor over such a layout, or None
    runtime_pointer: Optional[Callable[..., Any]] = None  # (dtype, value, mem_space, align) -> a Pointer at a runtime address in a kernel, or None
    address_register: Optional[Callable[..., Any]] = None  # (address.PointerInt) -> its address as a kernel's Int64 register value
    param_by_address: Optional[Callable[..., Any]] = None  # (kernel param, dtype, align, memspace, op) -> an engine over its address


hooks = _Hooks()


def instruction(name: str, what: Optional[str] = None) -> Callable[..., Any]:
    """The kernel's function for an instruction that CuTe DSL names in an atoms' namespace
    (``"wgmma.fence"`` is ``cute.nvgpu.warpgroup.fence``, ``"tcgen05.commit"`` ...): the atoms call
    it through here, the kernel implements it (``hooks.instruction``). With no kernel imported
    there is no kernel being traced to run it in: a TraceError says so, naming ``what`` (the
    instruction as the user wrote it; ``name`` if not given), as the kernel's own check does."""
    if hooks.instruction is not None:
        return hooks.instruction(name)
    from .errors import TraceError  # errors.py imports nothing

    raise TraceError(f"{what or name} is only available inside a @cute.kernel function while it is launched")


def install(**implementations: Any) -> None:
    """Install the kernel's implementations of the hooks named (the kernel calls this once)."""
    for name, fn in implementations.items():
        if not hasattr(_Hooks, name) or name.startswith("_"):
            raise TypeError(f"tracing.install: no hook named {name!r}")
        setattr(hooks, name, fn)
