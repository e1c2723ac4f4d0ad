"""CuTe DSL names that cutelab's own API does not carry, for the hook's namespaces:
``cutlass.select_``, ``cutlass.CUDA_VERSION``, ``cute.assume``, ``cute.arch.WARP_SIZE``,
``cute.math.erf``/``fma``/``ceil``/..., ``cute.compile`` in the TVM-FFI style.

>>> CUTLASS_EXTRAS["select_"](True, 1, 2), str(CUTLASS_EXTRAS["CUDA_VERSION"]), ARCH_EXTRAS["WARP_SIZE"]
(1, '12.9', 32)
>>> ARCH_EXTRAS["fma_packed_f32x2"]((1.0, 2.0), (3.0, 4.0), (0.5, 0.5))
(3.5, 8.5)
"""

from __future__ import annotations

from typing import Any, Dict

from .where import NotEmulatedError, refuse, user_line


class Version:
    """cutlass.CUDA_VERSION: the CUDA version the DSL was built for (major, minor; prints "12.9")."""

    def __init__(self, major: int, minor: int) -> None:
        self.major, self.minor = major, minor

    def _t(self) -> tuple:
        return (self.major, self.minor)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def __repr__(self) -> str:
        return f"Version('{self}')"

    def __eq__(self, o: Any) -> bool:
        return self._t() == _as_t(o)

    def __lt__(self, o: Any) -> bool:
        return self._t() < _as_t(o)

    def __le__(self, o: Any) -> bool:
        return self._t() <= _as_t(o)

    def __gt__(self, o: Any) -> bool:
        return self._t() > _as_t(o)

    def __ge__(self, o: Any) -> bool:
        return self._t() >= _as_t(o)

    def __hash__(self) -> int:
        return hash(self._t())


def _as_t(o: Any) -> tuple:
    if isinstance(o, Version):
        return o._t()
    if isinstance(o, str):
        return tuple(int(x) for x in o.split(".")[:2])
    return tuple(o)[:2]


CUDA_VERSION = Version(12, 9)


def select_(cond: Any, if_value: Any, else_value: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """cutlass.select_: cond ? if_value : else_value; a runtime cond selects per thread in a kernel."""
    from ..kernel.frontend.control import ifexp

    return ifexp(cond, lambda: if_value, lambda: else_value)


def assume(src: Any, divby: Any = None, *, loc: Any = None, ip: Any = None) -> Any:
    """cute.assume: tells the DSL's compiler that src is divisible by divby. cutelab's value ranges
    need no hint; the value is returned unchanged (a static value is checked)."""
    if isinstance(src, int) and not isinstance(src, bool) and isinstance(divby, int) and divby and src % divby:
        raise ValueError(f"cute.assume({src}, divby={divby}): {src} is not divisible by {divby}")
    return src


def _math(name: str):
    def f(x: Any, fastmath: bool = False, approx: bool = False, ftz: bool = False, rounding: Any = None, *,
          loc: Any = None, ip: Any = None) -> Any:
        """``approx=True`` is the approximate instruction (``sqrt.approx.f32``, quack's tile scheduler), as
        fastmath picks it; flush-to-zero and explicit rounding modes are refused by name."""
        from ..kernel.instr.mathops import _apply

        if ftz or rounding is not None:
            raise NotEmulatedError(f"cute.math.{name}({'ftz=True' if ftz else f'rounding={rounding}'})",
                                   "cutelab computes with the default rounding and keeps subnormals",
                                   where=user_line(2))
        return _apply(name, x, fastmath or approx)

    f.__name__ = name
    f.__doc__ = f"cute.math.{name}: element-wise {name} (kernel values, tensor values or numbers)."
    return f


def _abs(x: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """cute.math.abs: |x| of floats (absf) and of integers."""
    from ..kernel.instr.mathops import _apply

    dt = getattr(x, "dtype", None)
    if dt is not None and not getattr(dt, "is_float", True):
        return abs(x)
    return _apply("abs", x) if dt is not None or isinstance(x, float) else abs(x)


def _fma(a: Any, b: Any, c: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """cute.math.fma: a * b + c (the CUDA compiler contracts it to one fma, as the DSL emits)."""
    return a * b + c


def _minmax(name: str, a: Any, b: Any, propagate_nan: Any = False, ftz: Any = False) -> Any:
    """cute.math.max/min of two scalars (kernel values or numbers). As CuTe DSL 4.8.1's: a NaN operand
    is ignored (arith.maxnumf, the other operand is the result) unless ``propagate_nan`` (arith.maximumf);
    integers compare as integers."""
    from ..errors import TraceError
    from ..kernel.arch import _float_binary

    if ftz:
        raise TraceError(f"cute.math.{name}(ftz=True): cutelab's kernel compiler has no flush-to-zero max/min")
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b) if name == "max" else min(a, b)
    dt = getattr(a, "dtype", None) or getattr(b, "dtype", None)
    if dt is not None and not getattr(dt, "is_float", False):
        return _float_binary(name, a, b)  # integer kernel values: max/min
    return _float_binary(name if propagate_nan else "f" + name, a, b)


def _warp_size() -> int:
    return 32


def _experimental_extras() -> Dict[str, Any]:
    from .experimental import experimental
    from .experimental.memory import Array, Pointer, make_array_view
    from .experimental.swizzle import Swizzle, apply_swizzle, load_swizzled, store_swizzled
    from .experimental.tcgen05 import inttoptr
    from .experimental.vector import VECTOR_NAMESPACE, Vector, full, print_nd_vector

    # cutlass.Swizzle is the low-level API's swizzle of byte addresses (cute.Swizzle: of element offsets)
    return {"Array": Array, "Pointer": Pointer, "make_array_view": make_array_view, "experimental": experimental,
            "Vector": Vector, "vector": VECTOR_NAMESPACE, "Swizzle": Swizzle, "apply_swizzle": apply_swizzle,
            "load_swizzled": load_swizzled, "store_swizzled": store_swizzled, "GridConstant": GridConstant,
            "inttoptr": inttoptr, "full": full, "print_nd_vector": print_nd_vector}


class GridConstant:
    """``cutlass.GridConstant[T]``: the annotation of a kernel parameter passed as ``__grid_constant__``
    (a tensor map); cutelab's kernels pass tensor maps that way whatever the annotation, so
    ``GridConstant[T]`` is ``T``."""

    def __class_getitem__(cls, item: Any) -> Any:
        return item


CUTLASS_EXTRAS: Dict[str, Any] = {
    "select_": select_, "CUDA_VERSION": CUDA_VERSION, "__version__": "4.8.1", **_experimental_extras(),
}

def _cute_extras() -> Dict[str, Any]:
    from . import tvm_ffi

    from . import dsl_utils

    return {"assume": assume, "compile": tvm_ffi.compile, "FastDivmodDivisor": dsl_utils.FastDivmodDivisor,
            "FastDivmodDivisorV2": dsl_utils.FastDivmodDivisorV2,
            "fast_divmod_create_divisor": dsl_utils.fast_divmod_create_divisor,
            "fast_divmod_create_divisor_v2": dsl_utils.fast_divmod_create_divisor_v2}


CUTE_EXTRAS: Dict[str, Any] = _cute_extras()

def griddepcontrol_wait(*, loc: Any = None, ip: Any = None) -> None:
    """cute.arch.griddepcontrol_wait: wait for the grids this one depends on. cutelab launches kernels
    without the programmatic-dependent-launch attribute (launch(use_pdl=True) runs in stream order), so
    they have finished when this kernel starts: nothing to wait for, on the GPU as on the CPU."""


def griddepcontrol_launch_dependents(*, loc: Any = None, ip: Any = None) -> None:
    """cute.arch.griddepcontrol_launch_dependents: lets dependent grids start early; a hint that
    changes nothing when launches run in stream order (as cutelab launches them)."""


def _pair(x: Any, name: str) -> tuple:
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise TypeError(f"cute.arch.{name}: operands are pairs of Float32 values, got {x!r}")
    return tuple(x)


def _packed(name: str, n: int, fn: Any) -> Any:
    def packed(*args: Any, rnd: Any = None, ftz: Any = None, loc: Any = None, ip: Any = None) -> tuple:
        if len(args) != n:
            raise TypeError(f"cute.arch.{name} takes {n} pairs, got {len(args)} arguments")
        ps = [_pair(a, name) for a in args]
        return tuple(fn(*(p[i] for p in ps)) for i in range(2))

    packed.__name__ = name
    packed.__doc__ = (f"cute.arch.{name}: the f32x2 operation on two pairs element by element (the GPU gets the "
                      "two scalar instructions, with the same results)")
    return packed


def _arch_exp2(a: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """cute.arch.exp2 (deprecated in CuTe DSL for cute.math.exp2(fastmath=True), which is what it is here):
    2**a in f32, PTX ``ex2.approx.ftz.f32`` on the GPU as CuTe DSL emits it."""
    from ..kernel.instr.mathops import _apply
    from ..numeric import Float32

    return Float32(_apply("exp2", Float32(a), fastmath=True))


def _arch_exp(a: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """cute.arch.exp (deprecated in CuTe DSL): exp2(a * log2(e)), as CuTe DSL computes it."""
    return _arch_exp2(a * 1.4426950408889634)


def _inline_ptx(ptx_code: str, **kwargs: Any) -> Any:
    """cute.arch.inline_ptx: named operands over llvm.inline_asm (kernel/instr/inline_asm.py)."""
    from ..kernel.instr.inline_asm import NotInterpreted, inline_ptx

    where = user_line(2)
    try:
        return inline_ptx(ptx_code, where=where, **kwargs)
    except NotInterpreted as e:
        raise NotEmulatedError(f"{e.instr} (cute.arch.inline_ptx)", str(e), where=where) from None


def _vote(kind: str) -> Any:
    """cute.arch.vote_{ballot,any,all,uni}_sync(pred, mask=FULL_MASK): PTX's vote.sync, as the primitives'
    vote_sync builds it (inline PTX: kernel/instr/inline_asm.py runs it on the CPU and prints it for the GPU)."""

    def vote(pred: Any, mask: Any = 0xFFFFFFFF, *, loc: Any = None, ip: Any = None) -> Any:
        from .experimental.wrappers import vote_sync

        return vote_sync(mask, pred, kind)

    vote.__name__ = vote.__qualname__ = f"vote_{kind}_sync"
    return vote


def warp_reduction(val: Any, op: Any, *, threads_in_group: int = 32, loc: Any = None, ip: Any = None) -> Any:
    """cute.arch.warp_reduction: val reduced by op over each group of threads_in_group lanes (a power of two up
    to 32) with butterfly shuffles, offsets threads_in_group / 2, ..., 1 (CuTe DSL's order: every lane of a
    group ends with the same value)."""
    from ..kernel import arch

    if not isinstance(threads_in_group, int) or threads_in_group < 1 or threads_in_group > 32 or \
            threads_in_group & (threads_in_group - 1):
        raise ValueError(f"cute.arch.warp_reduction: threads_in_group must be a power of two from 1 to 32, got "
                         f"{threads_in_group!r}")
    offset = threads_in_group // 2
    while offset > 0:
        val = op(val, arch.shuffle_sync_bfly(val, offset=offset, mask=-1, mask_and_clamp=31))
        offset //= 2
    return val


def _red_max(x: Any, y: Any) -> Any:
    from ..kernel import arch
    from ..kernel.frontend.control import max_
    from ..numeric import Float32

    return arch.fmax(x, y) if getattr(x, "dtype", None) is Float32 or isinstance(x, Float32) else max_(x, y)


def warp_reduction_max(val: Any, *, threads_in_group: int = 32, loc: Any = None, ip: Any = None) -> Any:
    """cute.arch.warp_reduction_max: warp_reduction with fmax (Float32) or max."""
    return warp_reduction(val, _red_max, threads_in_group=threads_in_group)


def warp_reduction_sum(val: Any, *, threads_in_group: int = 32, loc: Any = None, ip: Any = None) -> Any:
    """cute.arch.warp_reduction_sum: warp_reduction with +."""
    return warp_reduction(val, lambda x, y: x + y, threads_in_group=threads_in_group)


def _arch_aliases() -> Dict[str, Any]:
    from ..kernel import arch

    return {"warpgroup_reg_alloc": arch.setmaxregister_increase, "warpgroup_reg_dealloc": arch.setmaxregister_decrease}


def _tmem_cols(which: str, table: Dict[str, int]) -> Any:
    def f(compute_capability: str) -> int:
        if compute_capability not in table:
            raise ValueError(f"cute.arch.get_{which}_tmem_alloc_cols: unsupported compute capability: "
                             f"{compute_capability!r} (one of {', '.join(table)})")
        return table[compute_capability]

    f.__name__ = f"get_{which}_tmem_alloc_cols"
    f.__doc__ = f"The {which}imum tensor-memory allocation, in 32-bit columns, of a compute capability ('sm_100')."
    return f


def _calc_packed_f32x2_op(src_a: Any, src_b: Any, src_c: Any, calc_func: Any, *, result_type_inferred: bool = False,
                          rnd: Any = "rn", ftz: Any = None, loc: Any = None, ip: Any = None) -> tuple:
    """cute.arch.calc_packed_f32x2_op: ``calc_func`` (``nvvm.add/sub/mul/fma_packed_f32x2``) on pairs, as the
    cute.arch packed operation of that name (round to nearest; another ``rnd`` is refused)."""
    name = str(getattr(calc_func, "_name", getattr(calc_func, "__name__", calc_func))).rsplit(".", 1)[-1]
    if name not in _PACKED:
        raise NotEmulatedError(f"cute.arch.calc_packed_f32x2_op(calc_func={calc_func!r})",
                               f"cutelab has the packed f32x2 operations {sorted(_PACKED)}", where=user_line(2))
    if str(getattr(rnd, "name", rnd)).lower() not in ("rn", "none"):
        raise NotEmulatedError(f"cute.arch.calc_packed_f32x2_op(rnd={rnd!r})", "cutelab rounds to nearest only",
                               where=user_line(2))
    args = (src_a, src_b) if src_c is None else (src_a, src_b, src_c)
    return _PACKED[name](*args)


_PACKED = {
    "add_packed_f32x2": _packed("add_packed_f32x2", 2, lambda a, b: a + b),
    "sub_packed_f32x2": _packed("sub_packed_f32x2", 2, lambda a, b: a - b),
    "mul_packed_f32x2": _packed("mul_packed_f32x2", 2, lambda a, b: a * b),
    "fma_packed_f32x2": _packed("fma_packed_f32x2", 3, lambda a, b, c: a * b + c),
}

def _warp_redux_sync(value: Any, kind: Any, mask_and_clamp: Any = 0xFFFFFFFF, *, abs: Any = None, nan: Any = None,
                     loc: Any = None, ip: Any = None) -> Any:
    """``cute.arch.warp_redux_sync``: ``redux.sync`` of value over the warp (Int32 / Uint32: add, and, or, xor,
    min, max, umin, umax; Float32: fmin, fmax, with ``abs`` / ``nan``); "max"/"min" become "fmax"/"fmin" for
    Float32 and "umax"/"umin" for Uint32, as CuTe DSL's do."""
    from ..numeric import Float32, Int32, Uint32
    from ..errors import TraceError
    from .experimental.wrappers import redux_sync

    k = str(getattr(kind, "value", kind))
    dt = getattr(value, "dtype", None)
    if dt is None:  # a Python number, or an integer index expression (thread_idx arithmetic): Int32
        from ..kernel.ir.symbolic import is_sym

        dt = Float32 if isinstance(value, float) else Int32 if isinstance(value, int) or is_sym(value) else type(value)
        value = dt(value) if isinstance(value, (int, float)) and dt in (Float32, Int32) else value
    if dt is Float32:
        k = {"max": "fmax", "min": "fmin"}.get(k, k)
        if k not in ("fmax", "fmin"):
            raise TraceError(f"cute.arch.warp_redux_sync: kind={k!r} of a Float32 value; Float32 reduces with fmax "
                             f"or fmin")
    elif dt in (Int32, Uint32):
        if dt is Uint32:
            k = {"max": "umax", "min": "umin"}.get(k, k)
        if k in ("fmax", "fmin"):
            raise TraceError(f"cute.arch.warp_redux_sync: kind={k!r} of a {dt} value; fmax/fmin reduce Float32")
    else:
        raise TraceError(f"cute.arch.warp_redux_sync: a {dt} value; redux.sync reduces Int32, Uint32 and Float32")
    got = redux_sync(value, k, mask_and_clamp, abs=abs, nan=nan)
    return got if dt is not Uint32 else Uint32(got)


def _prmt(src: Any, src_reg_shifted: Any, prmt_indices: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """cute.arch.prmt: PTX ``prmt.b32 d, a, b, c`` (the bytes of d picked from the 8 bytes of b:a by the
    selector c), as CuTe DSL 4.8.1 emits it (inline PTX over Int32 operands): cutelab's PTX interpreter on
    the CPU, ``asm volatile`` in the CUDA. quack's permute_Cregs_b32_for_stsm packs bf16 pairs so."""
    from ..kernel.instr.inline_asm import NotInterpreted, inline_asm
    from ..numeric import Int32

    where = user_line(2)
    try:
        return inline_asm(None, [Int32(src), Int32(src_reg_shifted), Int32(prmt_indices)],
                          "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r", where, "cute.arch.prmt")
    except NotInterpreted as e:
        raise NotEmulatedError("cute.arch.prmt", str(e), where=where) from None


ARCH_EXTRAS: Dict[str, Any] = {
    "WARP_SIZE": 32, "FULL_MASK": 0xFFFFFFFF,
    # tensor memory per CTA (CuTe DSL 4.8.1's table: 512 columns, sm_107 576; allocations of at least 32)
    "get_max_tmem_alloc_cols": _tmem_cols("max", {"sm_120": 512, "sm_107": 576, "sm_103": 512, "sm_100": 512}),
    "get_min_tmem_alloc_cols": _tmem_cols("min", {"sm_120": 32, "sm_107": 32, "sm_103": 32, "sm_100": 32}), "griddepcontrol_wait": griddepcontrol_wait,
    "griddepcontrol_launch_dependents": griddepcontrol_launch_dependents, **_arch_aliases(),
    **_PACKED, "calc_packed_f32x2_op": _calc_packed_f32x2_op,
    "exp2": _arch_exp2, "exp": _arch_exp,
    "inline_ptx": _inline_ptx,
    **{f"vote_{k}_sync": _vote(k) for k in ("ballot", "any", "all", "uni")},
    "warp_redux_sync": _warp_redux_sync,
    "warp_reduction": warp_reduction, "warp_reduction_max": warp_reduction_max, "warp_reduction_sum": warp_reduction_sum,
    # names of the DSL's cute.arch that cutelab has no instruction for yet: they raise when called
    **{n: refuse(f"cute.arch.{n}", "no instruction for it in cutelab's kernel compiler yet") for n in (
        "redux_sync", "mapa", "popc", "clz")},
    "prmt": _prmt,
}

MATH_EXTRAS: Dict[str, Any] = {
    **{n: _math(n) for n in ("exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh",
                             "atan", "erf", "ceil", "floor")},
    "abs": _abs, "fma": _fma, "max": lambda a, b, propagate_nan=False, ftz=False, *, fastmath=False, loc=None, ip=None: _minmax(
        "max", a, b, propagate_nan, ftz),
    "min": lambda a, b, propagate_nan=False, ftz=False, *, fastmath=False, loc=None, ip=None: _minmax(
        "min", a, b, propagate_nan, ftz),
    "rcp": lambda a, *, fastmath=False, loc=None, ip=None: 1.0 / a,
    "add": lambda a, b, **kw: a + b, "sub": lambda a, b, **kw: a - b, "mul": lambda a, b, **kw: a * b,
    **{n: refuse(f"cute.math.{n}", "not in cutelab's kernel compiler yet") for n in (
        "atan2", "pow", "acos", "asin", "copysign", "round", "trunc", "exp10", "log1p", "expm1")},
}
