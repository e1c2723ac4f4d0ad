"""``cutlass.utils.SmemAllocator``: shared memory of a thread block, inside a @cute.kernel.

Each ``allocate_tensor`` makes one shared array of the kernel (``__shared__`` in CUDA, one
array per block in the CPU interpreter) and returns a tensor over it in the ``smem`` space.
Layouts must be static; the array holds every offset the layout reaches.
"""

from __future__ import annotations

from typing import Any, Optional

from ..errors import TraceError

__all__ = ["SmemAllocator"]


class SmemAllocator:
    """Allocates shared-memory tensors inside a traced kernel.

    >>> SmemAllocator()
    SmemAllocator(0 bytes)
    """

    def __init__(self) -> None:
        self._allocated = 0  # bytes, counting alignment padding as the GPU would

    @property
    def allocated(self) -> int:
        return self._allocated

    @allocated.setter
    def allocated(self, v: int) -> None:
        # the kernel's total (cute.arch.dynamic_smem_size): what every allocator of it has handed out
        from ..kernel.arch import smem_box
        from ..kernel.frontend.trace import current

        smem_box(current("SmemAllocator"))[0] += v - self._allocated
        self._allocated = v

    def __repr__(self) -> str:
        return f"SmemAllocator({self.allocated} bytes)"

    def allocate(self, size_or_type: Any, byte_alignment: int = 1, **kwargs: Any) -> Any:
        """Shared memory for a ``@cute.struct`` class (an instance of it over the new memory), or for
        a number of bytes (a pointer to them: views come from a struct over it)."""
        from ..kernel.frontend.smem import SmemPtr, SmemRegion
        from ..kernel.frontend.trace import current

        current("SmemAllocator.allocate")
        if byte_alignment < 1 or byte_alignment & (byte_alignment - 1):
            raise TraceError(f"SmemAllocator.allocate: byte_alignment must be a power of two, got {byte_alignment}")
        if isinstance(size_or_type, type) and getattr(size_or_type, "_cl_struct", False):
            nbytes, align = size_or_type.size_in_bytes(), max(byte_alignment, size_or_type.__alignof__())
            region = SmemRegion(nbytes, align)
            self.allocated = -(-self.allocated // align) * align + nbytes
            return size_or_type(SmemPtr(region, 0))
        if _is_numeric_type(size_or_type):  # one element: a typed pointer to it
            nbytes = max(1, size_or_type.width // 8)
            region = SmemRegion(nbytes, max(byte_alignment, nbytes))
            self.allocated = -(-self.allocated // region.align) * region.align + nbytes
            return SmemPtr(region, 0, size_or_type)
        if isinstance(size_or_type, bool) or not isinstance(size_or_type, int) or size_or_type < 1:
            raise TraceError(f"SmemAllocator.allocate: expected a @cute.struct class, a numeric type or a positive "
                             f"number of bytes, got {size_or_type!r}")
        region = SmemRegion(int(size_or_type), byte_alignment)
        self.allocated = -(-self.allocated // region.align) * region.align + int(size_or_type)
        return SmemPtr(region, 0)

    def allocate_array(self, element_type: Any, num_elems: int = 1, byte_alignment: int = 1, **kwargs: Any) -> Any:
        """Shared memory for num_elems elements of element_type: a pointer to the first (views come from
        ``cute.make_tensor(ptr, layout)``-style use of a struct, or ``allocate_tensor``)."""
        from ..kernel.frontend.smem import SmemPtr, SmemRegion
        from ..kernel.frontend.trace import current

        current("SmemAllocator.allocate_array")
        if not _is_numeric_type(element_type):
            raise TraceError(f"SmemAllocator.allocate_array: element_type must be a cutlass numeric type, "
                             f"got {element_type!r}")
        if isinstance(num_elems, bool) or not isinstance(num_elems, int) or num_elems < 1:
            raise TraceError(f"SmemAllocator.allocate_array: num_elems must be a positive int, got {num_elems!r}")
        if byte_alignment < 1 or byte_alignment & (byte_alignment - 1):
            raise TraceError(f"SmemAllocator.allocate_array: byte_alignment must be a power of two, "
                             f"got {byte_alignment}")
        esize = max(1, element_type.width // 8)
        nbytes = -(-element_type.width * num_elems // 8)
        region = SmemRegion(nbytes, max(byte_alignment, esize))
        self.allocated = -(-self.allocated // region.align) * region.align + nbytes
        return SmemPtr(region, 0, element_type)

    def allocate_tensor(self, element_type: Any, layout: Any, byte_alignment: int = 1,
                        swizzle: Optional[Any] = None, **kwargs: Any) -> Any:
        """A tensor of element_type over layout (a Layout or a size) in shared memory."""
        from ..layout import Layout, make_layout
        from ..tensor import Tensor
        from ..kernel.frontend.engines import SmemEngine
        from ..kernel.frontend.trace import _static_offsets, current

        t = current("SmemAllocator.allocate_tensor")
        sw = None
        offset0 = 0
        if not isinstance(layout, Layout):
            if hasattr(layout, "outer") and hasattr(layout, "inner"):  # a ComposedLayout S o off o L
                from ..swizzle import Swizzle

                if not isinstance(layout.inner, Swizzle):
                    raise TraceError(f"SmemAllocator.allocate_tensor: composed layout {layout} must have a "
                                     f"Swizzle as its inner function")
                if not isinstance(layout.offset, int) or layout.offset < 0:
                    raise TraceError(f"SmemAllocator.allocate_tensor: composed layout {layout} must have a "
                                     f"static non-negative offset")
                sw, offset0, layout = layout.inner, layout.offset, layout.outer
            else:
                layout = make_layout(layout)
        if swizzle is not None:  # a swizzle of the pointer: it acts on byte addresses
            from ..kernel.frontend.smem import element_swizzle

            if sw is not None and not sw.is_identity:
                raise TraceError(f"SmemAllocator.allocate_tensor: a swizzled layout and swizzle={swizzle} at once")
            sw = element_swizzle(swizzle, element_type.bytes, "bytes", "SmemAllocator.allocate_tensor",
                                 element_type.width)
        if sw is not None and sw.is_identity:
            sw = None
        if byte_alignment < 1 or byte_alignment & (byte_alignment - 1):
            raise TraceError(f"SmemAllocator.allocate_tensor: byte_alignment must be a power of two, "
                             f"got {byte_alignment}")
        offs = _static_offsets(layout, "SmemAllocator.allocate_tensor")
        if len(offs) and offs.min() < 0:
            raise TraceError(f"SmemAllocator.allocate_tensor: layout {layout} reaches negative offsets")
        n = int(offs.max()) + 1 + offset0 if len(offs) else 1
        if sw is not None:  # the swizzle permutes whole blocks of cosize elements
            n = -(-n // sw.cosize()) * sw.cosize()
        align = max(byte_alignment, element_type.bytes, 16)
        if sw is not None:  # offsets swizzle as addresses do when the array starts on a period
            align = max(align, min(1024, sw.cosize() * element_type.bytes))
        sh = t.add_shared(element_type, n, align)
        self.allocated = -(-self.allocated // align) * align + sh.bytes
        from ..kernel.frontend.smem import use_dynamic_smem

        use_dynamic_smem(t)  # above 48 KiB the arrays become dynamic shared memory
        if sw is not None:
            from ..kernel.frontend.smem import SwizzledSmemEngine

            return Tensor(SwizzledSmemEngine(sh, sw, base_align=max(byte_alignment, element_type.bytes),
                                             ptr_swizzle=swizzle), layout, offset0, _checked=True)
        return Tensor(SmemEngine(sh), layout, offset0, _checked=True)


def _is_numeric_type(x: Any) -> bool:
    from ..numeric import is_numeric_type

    return is_numeric_type(x)


def get_smem_capacity_in_bytes(compute_capability: Any = None) -> int:
    """Bytes of shared memory one block can use on an architecture ("sm_80", "sm_90a", 90, ...):
    the opt-in maximum less the 1 KiB the system reserves, as CuTe DSL's helper gives it. Without
    an argument: the GPU's, else CUTE_DSL_ARCH's.

    >>> get_smem_capacity_in_bytes("sm_80"), get_smem_capacity_in_bytes("sm_90a")
    (166912, 232448)
    """
    import os

    from ..emulated_gpu import SMEM_CAPACITY_KIB, smem_capacity

    cc = compute_capability
    if cc is None:
        cc = os.environ.get("CUTE_DSL_ARCH")
        if not cc:
            try:
                from ..kernel.cuda.driver import device_arch

                cc = device_arch()
            except Exception as e:  # noqa: BLE001 - no GPU: say what to pass instead
                raise ValueError("get_smem_capacity_in_bytes(): no GPU to ask and CUTE_DSL_ARCH is not set; pass "
                                 "the architecture, e.g. get_smem_capacity_in_bytes('sm_80')") from e
    got = smem_capacity(cc)
    if got is None:
        raise ValueError(f"get_smem_capacity_in_bytes({compute_capability!r}): unknown architecture; known: "
                         + ", ".join(f"sm_{k}" for k in sorted(SMEM_CAPACITY_KIB)))
    return got
