"""Copy operations that every architecture has: the universal copy (``a = b``) and the SIMT
loads/stores with memory attributes, as ``cutlass.cute.nvgpu`` names them.

A copy op is a value. ``make_copy_atom(op, value_type, ...)`` (in cutelab.nvgpu.copy_atom) asks
the op for its thread-value layouts: ``ThrID`` (atom thread -> thread index) and the source,
destination and reference TV layouts, which map (thread, value) to an offset within one atom's
data. CuTe writes them in bits and recasts them to the element type; so does cutelab.

>>> from cutelab.nvgpu import CopyUniversalOp
>>> print(CopyUniversalOp())
universal Copy Operation
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from ..algebra import recast_layout
from ..layout import Layout
from ..numeric import Numeric

__all__ = [
    "CopyOp", "CopyUniversalOp", "CopyG2ROp", "CopyR2GOp", "CopyS2ROp", "CopyR2SOp",
    "MemoryOrder", "MemoryScope", "L2PrefetchSize", "CacheEvictionPriority", "LoadCacheMode",
    "StoreCacheMode", "SharedSpace",
]


# --------------------------------------------------------------------------- enums

class _Enum(enum.Enum):
    """Prints as the DSL's enums do: ``MemoryOrder.WEAK``, repr ``<MemoryOrder.WEAK>``."""

    def __str__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}.{self.name}>"


class MemoryOrder(_Enum):
    WEAK = "weak"
    RELAXED = "relaxed"
    ACQUIRE = "acquire"
    RELEASE = "release"
    ACQ_REL = "acq_rel"
    SC = "sc"
    MMIO = "mmio"
    CONSTANT = "constant"
    VOLATILE = "volatile"


class MemoryScope(_Enum):
    CTA = "cta"
    CLUSTER = "cluster"
    GPU = "gpu"
    SYS = "sys"


class L2PrefetchSize(_Enum):
    NONE = "none"
    RESERVED = "reserved"
    SIZE_64B = "64B"
    SIZE_128B = "128B"
    SIZE_256B = "256B"


class CacheEvictionPriority(_Enum):
    EVICT_NORMAL = "evict_normal"
    EVICT_FIRST = "evict_first"
    EVICT_LAST = "evict_last"
    EVICT_UNCHANGED = "evict_unchanged"
    NO_ALLOCATE = "no_allocate"


class LoadCacheMode(_Enum):
    """Cache operator of a load (PTX .ca, .cg, .cs, .lu, none)."""

    ALWAYS = "always"
    GLOBAL = "global"
    STREAMING = "streaming"
    LAST_USE = "last_use"
    NONE = "none"


class StoreCacheMode(_Enum):
    WRITE_BACK = "write_back"
    GLOBAL = "global"
    STREAMING = "streaming"
    WRITE_THROUGH = "write_through"
    NONE = "none"


class SharedSpace(_Enum):
    CTA = "cta"
    CLUSTER = "cluster"


# --------------------------------------------------------------------------- ops

class CopyOp:
    """Base of the copy operations. Subclasses give their layouts through ``_atom_layouts``.

    ``_atom_layouts(value_type, **kwargs)`` returns a dict with ``thr_id``, ``src``, ``dst``,
    ``ref`` (Layouts in units of value_type) and ``num_bits_per_copy`` (or None), after checking
    the op-specific keyword arguments of ``make_copy_atom``.
    """

    def _atom_layouts(self, value_type: Numeric, **kwargs: Any) -> dict:  # pragma: no cover
        raise NotImplementedError(f"{type(self).__name__} has no thread-value layouts")


def _type_bits(value_type: Numeric) -> int:
    """Bits of one element in an atom's layouts: Boolean is i1 there (1 bit), as in the DSL."""
    return 1 if value_type.kind == "bool" else value_type.width


def _recast_bits(value_type: Numeric, bits: Layout) -> Layout:
    """A layout of bit offsets recast to offsets in units of value_type (CuTe's
    recast_layout<uint1_t, ValType>, rounding as the DSL does)."""
    return recast_layout(_type_bits(value_type), 1, bits)


def _check_num_bits(op: Any, num_bits_per_copy: Any, value_type: Numeric, positive: bool) -> int:
    name = type(op).__name__
    if isinstance(num_bits_per_copy, bool) or not isinstance(num_bits_per_copy, int) or num_bits_per_copy < (1 if positive else 0):
        need = "a positive int" if positive else "a non-negative int"
        raise ValueError(
            f"make_copy_atom({name}(), {value_type}): 'num_bits_per_copy' must be {need}, got {num_bits_per_copy!r}"
        )
    n = num_bits_per_copy
    w = _type_bits(value_type)
    if n and (n & (n - 1)):
        raise ValueError(
            f"make_copy_atom({name}(), {value_type}, num_bits_per_copy={n}): the number of bits per copy "
            f"must be a power of two"
        )
    if n and n % w:
        raise ValueError(
            f"make_copy_atom({name}(), {value_type}, num_bits_per_copy={n}): {n} bits is not a whole number "
            f"of {value_type} elements ({w} bits each); a copy moves whole elements"
        )
    return n


def _simt_layouts(op: Any, value_type: Numeric, num_bits_per_copy: Any, positive: bool = False,
                  specialized: bool = False) -> dict:
    """One thread copies num_bits_per_copy bits: (1,n):(0,1) in elements; 0 bits (let the
    compiler vectorize) is one element with all-zero strides, as the DSL prints it."""
    n = _check_num_bits(op, num_bits_per_copy, value_type, positive)
    if specialized and n == 0 and value_type.kind == "bool":
        raise TypeError(f"make_copy_atom({type(op).__name__}(), {value_type}): a copy of Boolean (i1) elements "
                        f"with memory attributes needs an explicit num_bits_per_copy")
    if specialized and n == 0:
        n = _type_bits(value_type)  # one element per copy, with strides (1,1):(0,1) as the DSL prints
    thr = Layout(1, 0)
    if n == 0:
        tv = Layout((1, 1), (0, 0))
    else:
        tv = _recast_bits(value_type, Layout((1, n), (0, 1)))
    return {"thr_id": thr, "src": tv, "dst": tv, "ref": tv, "num_bits_per_copy": n}


def _reject(op: Any, kwargs: dict, allowed: tuple) -> None:
    for k in kwargs:
        if k not in allowed:
            raise TypeError(
                f"make_copy_atom({type(op).__name__}(), ...): unexpected keyword argument {k!r} "
                f"(this op takes {', '.join(allowed) if allowed else 'none'})"
            )


def _check_enum(op: Any, name: str, value: Any, cls: type) -> None:
    if not isinstance(value, cls):
        raise TypeError(
            f"make_copy_atom({type(op).__name__}(), ...): {name!r} must be a {cls.__name__}, got {value!r}"
        )


@dataclass(frozen=True)
class CopyUniversalOp(CopyOp):
    """The universal copy, ``a = b`` without memory attributes.

    ``make_copy_atom(CopyUniversalOp(), dtype, num_bits_per_copy=n)``: each thread copies n bits
    (n = 0: one element, vectorized by the compiler). ``memory_order``/``memory_scope`` are
    rejected (use CopyG2ROp, ...); ``l1c_evict_priority``/``invariant`` are accepted and ignored.

    >>> import cutelab as cute
    >>> print(cute.make_copy_atom(CopyUniversalOp(), cute.Float16, num_bits_per_copy=64).layout_src_tv)
    (1,4):(0,1)
    """

    def __str__(self) -> str:
        return "universal Copy Operation"

    def _atom_layouts(self, value_type: Numeric, num_bits_per_copy: Any = 0, **kwargs: Any) -> dict:
        ignored = ("l1c_evict_priority", "invariant")
        rejected = sorted(k for k in kwargs if k not in ignored)
        if rejected:
            raise TypeError(
                f"make_copy_atom(CopyUniversalOp(), {value_type}): the universal copy takes no memory attributes "
                f"({', '.join(rejected)}); use CopyG2ROp, CopyR2GOp, CopyS2ROp or CopyR2SOp"
            )
        return _simt_layouts(self, value_type, num_bits_per_copy)


@dataclass(frozen=True)
class CopyG2ROp(CopyOp):
    """Global memory -> register load with memory attributes (same layouts as the universal copy)."""

    def __str__(self) -> str:
        return "G2R copy operation"

    def _atom_layouts(self, value_type: Numeric, num_bits_per_copy: Any = 0,
                      memory_order: MemoryOrder = MemoryOrder.WEAK, memory_scope: MemoryScope = MemoryScope.CTA,
                      l2_prefetch_size: L2PrefetchSize = L2PrefetchSize.NONE,
                      l1c_evict_priority: CacheEvictionPriority = CacheEvictionPriority.EVICT_NORMAL,
                      load_cache_mode: LoadCacheMode = LoadCacheMode.ALWAYS, shared_space: SharedSpace = SharedSpace.CTA,
                      invariant: bool = False, **kwargs: Any) -> dict:
        _reject(self, kwargs, ())
        for n, v, c in (("memory_order", memory_order, MemoryOrder), ("memory_scope", memory_scope, MemoryScope),
                        ("l2_prefetch_size", l2_prefetch_size, L2PrefetchSize),
                        ("l1c_evict_priority", l1c_evict_priority, CacheEvictionPriority),
                        ("load_cache_mode", load_cache_mode, LoadCacheMode), ("shared_space", shared_space, SharedSpace)):
            _check_enum(self, n, v, c)
        return _simt_layouts(self, value_type, num_bits_per_copy, specialized=True)


@dataclass(frozen=True)
class CopyR2GOp(CopyOp):
    """Register -> global memory store with memory attributes."""

    def __str__(self) -> str:
        return "R2G copy operation"

    def _atom_layouts(self, value_type: Numeric, num_bits_per_copy: Any = 0,
                      memory_order: MemoryOrder = MemoryOrder.WEAK, memory_scope: MemoryScope = MemoryScope.CTA,
                      l1c_evict_priority: CacheEvictionPriority = CacheEvictionPriority.EVICT_NORMAL,
                      store_cache_mode: StoreCacheMode = StoreCacheMode.WRITE_BACK,
                      shared_space: SharedSpace = SharedSpace.CTA, **kwargs: Any) -> dict:
        _reject(self, kwargs, ())
        for n, v, c in (("memory_order", memory_order, MemoryOrder), ("memory_scope", memory_scope, MemoryScope),
                        ("l1c_evict_priority", l1c_evict_priority, CacheEvictionPriority),
                        ("store_cache_mode", store_cache_mode, StoreCacheMode), ("shared_space", shared_space, SharedSpace)):
            _check_enum(self, n, v, c)
        return _simt_layouts(self, value_type, num_bits_per_copy, specialized=True)


class _SharedSimt(CopyOp):
    def _atom_layouts(self, value_type: Numeric, num_bits_per_copy: Any = 0,
                      memory_order: MemoryOrder = MemoryOrder.WEAK, memory_scope: MemoryScope = MemoryScope.CTA,
                      shared_space: SharedSpace = SharedSpace.CTA, **kwargs: Any) -> dict:
        _reject(self, kwargs, ())
        for n, v, c in (("memory_order", memory_order, MemoryOrder), ("memory_scope", memory_scope, MemoryScope),
                        ("shared_space", shared_space, SharedSpace)):
            _check_enum(self, n, v, c)
        return _simt_layouts(self, value_type, num_bits_per_copy, specialized=True)


@dataclass(frozen=True)
class CopyS2ROp(_SharedSimt):
    """Shared memory -> register load with memory attributes."""

    def __str__(self) -> str:
        return "S2R copy operation"


@dataclass(frozen=True)
class CopyR2SOp(_SharedSimt):
    """Register -> shared memory store with memory attributes."""

    def __str__(self) -> str:
        return "R2S copy operation"
