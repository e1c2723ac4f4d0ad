"""``cutlass.jax`` as cutelab runs it: ``cutlass_call`` puts a CuTe DSL launcher in a JAX computation.

``cutlass_call(fn, output_shape_dtype=..., ...)`` returns a function of JAX arrays. Traced (under
``jax.jit``, ``shard_map``, custom_partitioning or ``jax.export``) it becomes one XLA custom call
(:mod:`.ffi`); when XLA runs it, the handler views each operand and result buffer as a cutelab
tensor and calls ``fn(stream, *inputs, *outputs, **kwargs)`` as CuTe DSL's does: the kernels run on
cutelab's CPU interpreter (jax on the CPU) or through cutelab's CUDA launch (jax on a GPU).

As in CuTe DSL 4.8.1:

- tensors are compact views of XLA's buffers: row-major unless a :class:`TensorSpec` gives
  ``layout`` (the stride order, which XLA then lays the buffer out in); ``mode`` permutes the
  modes the kernel sees; shapes and strides are dynamic (``?``, the stride-1 mode static) unless
  ``use_static_tensors`` or ``TensorSpec(static=True)``;
- ``None`` inputs are passed as None; ``input_output_aliases`` (top-level indices or key paths)
  makes results share their input's buffer, and the aliased results are not passed to ``fn``;
- keyword arguments are passed to ``fn`` as they are (its compile-time values).

Different here: nothing is compiled at lowering; a call compiles (or reuses) the launcher at its
first run, with the extents XLA gives it, so one traced call serves every shape a symbolic export
allows. Divisibility hints are checked against the extents and not otherwise used. The serialized
form of an export names cutelab's custom call and runs only in the process that traced it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..where import NotEmulatedError, user_line
from . import ffi as _ffi

try:
    import jax
    import jax.numpy as jnp
except ImportError:  # cutlass.jax without JAX: importable, and says what it needs when used
    jax = jnp = None

CUTE_DSL_MIN_SUPPORTED_JAX_VERSION = (0, 6, 0)
CUTE_DSL_JAX_MIN_SUPPORTED_PYTHON_VERSION = (3, 11)


def is_available() -> bool:
    """Whether JAX is installed (cutlass_call needs it)."""
    return jax is not None


def _need_jax(what: str) -> None:
    if jax is None:
        raise ModuleNotFoundError(f"cutlass.jax.{what} needs JAX, which is not installed (pip install jax)",
                                  name="jax")


def _dtype_tables() -> Tuple[Dict[str, Any], Dict[Any, str]]:
    from ... import numeric as n

    names = {"bool": "Boolean", "int4": "Int4", "int8": "Int8", "int16": "Int16", "int32": "Int32", "int64": "Int64",
             "uint8": "Uint8", "uint16": "Uint16", "uint32": "Uint32", "uint64": "Uint64", "bfloat16": "BFloat16",
             "float16": "Float16", "float32": "Float32", "float64": "Float64", "float8_e8m0fnu": "Float8E8M0FNU",
             "float8_e5m2": "Float8E5M2", "float8_e4m3": "Float8E4M3", "float8_e4m3fn": "Float8E4M3FN",
             "float8_e4m3b11fnuz": "Float8E4M3B11FNUZ", "float4_e2m1fn": "Float4E2M1FN"}
    to_cutlass = {k: getattr(n, v) for k, v in names.items() if hasattr(n, v)}
    return to_cutlass, {v: k for k, v in to_cutlass.items()}


def jax_to_cutlass_dtype(dtype: Any) -> Any:
    """The cutlass element type of a JAX dtype (float32 -> Float32)."""
    name = str(jnp.dtype(dtype)) if jnp is not None else str(dtype)
    to_cutlass, _ = _dtype_tables()
    if name not in to_cutlass:
        raise ValueError(f"jax_to_cutlass_dtype: the JAX dtype {name} has no cutlass element type")
    return to_cutlass[name]


def cutlass_to_jax_dtype(dtype: Any) -> Any:
    """The JAX dtype of a cutlass element type (Float32 -> float32)."""
    _need_jax("cutlass_to_jax_dtype")
    _, to_jax = _dtype_tables()
    if dtype not in to_jax:
        raise ValueError(f"cutlass_to_jax_dtype: the cutlass element type {dtype} has no JAX dtype")
    return jnp.dtype(to_jax[dtype])


def jax_to_cutlass_layout_order(layout: Optional[Sequence[int]]) -> Optional[Tuple[int, ...]]:
    """JAX's major-to-minor dimension order as CuTe's stride ranks (``layout[i]``: rank of dim i, 0 innermost).

    >>> jax_to_cutlass_layout_order((0, 1, 2))
    (2, 1, 0)
    """
    if layout is None:
        return None
    ranks = [0] * len(layout)
    for pos, dim in enumerate(layout):
        ranks[dim] = len(layout) - 1 - pos
    return tuple(ranks)


def cutlass_to_jax_layout_order(layout: Optional[Sequence[int]]) -> Optional[Tuple[int, ...]]:
    """CuTe's stride ranks as JAX's major-to-minor dimension order (the inverse of the above).

    >>> cutlass_to_jax_layout_order((0, 1, 2))
    (2, 1, 0)
    """
    if layout is None:
        return None
    return tuple(sorted(range(len(layout)), key=lambda d: -layout[d]))


@dataclass(frozen=True)
class TensorSpec:
    """How a JAX array becomes the kernel's tensor: ``layout`` (stride rank of each dimension, 0
    innermost; None: row-major), ``mode`` (the dimensions in the order the kernel sees them),
    ``static`` (None: cutlass_call's use_static_tensors), ``ptr_assumed_align`` (bytes) and
    ``divisibility`` (per dimension, or one int for the innermost)."""

    layout: Optional[Tuple[int, ...]] = field(default=None)
    mode: Optional[Tuple[int, ...]] = field(default=None)
    static: Optional[bool] = field(default=None)
    ptr_assumed_align: int = field(default=256)
    divisibility: Any = field(default=None)


TensorMode = TensorSpec  # CuTe DSL's older name

if jax is not None:
    jax.tree_util.register_dataclass(TensorSpec, data_fields=[],
                                     meta_fields=["layout", "mode", "static", "ptr_assumed_align", "divisibility"])


def _check_perm(what: str, perm: Sequence[int], rank: int, where: str) -> Tuple[int, ...]:
    perm = tuple(perm)
    if len(perm) != rank or sorted(perm) != list(range(rank)) or any(isinstance(p, bool) for p in perm):
        raise ValueError(f"cutlass_call: {where} has {what} {perm}, which is not a permutation of 0..{rank - 1} "
                         f"for its rank {rank}")
    return perm


def _divisibility(spec: TensorSpec, order: Tuple[int, ...], where: str) -> Tuple[Optional[int], ...]:
    """The spec's divisibility per dimension (None where it gives none)."""
    d = spec.divisibility
    r = len(order)
    if d is None:
        return (None,) * r
    if isinstance(d, int) and not isinstance(d, bool):
        d = tuple(d if order[i] == 0 else None for i in range(r))
    d = tuple(d)
    if len(d) != r or any(x is not None and (isinstance(x, bool) or not isinstance(x, int) or x < 1) for x in d):
        raise ValueError(f"cutlass_call: {where} has divisibility {spec.divisibility}, which is not one positive "
                         f"int or None per dimension (rank {r})")
    return d


@dataclass
class _Leaf:
    """One tensor operand or result as the kernel sees it."""

    dtype: Any  # cutlass element type
    order: Tuple[int, ...]
    mode: Tuple[int, ...]
    static: bool
    align: int
    divisibility: Tuple[int, ...]
    where: str

    def tensor(self, buf: "_ffi.Buffer") -> Any:
        """The cutelab tensor over buf: compact in self.order, its modes in self.mode."""
        from ...runtime import from_dlpack

        shape = buf.shape
        for i, (n, d) in enumerate(zip(shape, self.divisibility)):
            if n % d:
                raise ValueError(f"cutlass_call: {self.where} has extent {n} in dimension {i}, not a multiple "
                                 f"of its divisibility {d} (shape {shape})")
        strides = [0] * len(shape)
        acc = 1
        for dim in sorted(range(len(shape)), key=lambda i: self.order[i]):
            strides[dim] = acc
            acc *= shape[dim]
        shape_m = tuple(shape[i] for i in self.mode)
        strides_m = tuple(strides[i] for i in self.mode)
        if buf.platform == "cpu":
            t = _host_tensor(buf.address, acc, shape_m, strides_m, self.dtype, self.align)
        else:
            t = from_dlpack(_DeviceBuffer(buf.address, shape_m, strides_m, self.dtype, buf.device, self.where),
                            self.align)
        if not self.static:
            _make_dynamic(t, shape, strides, self.order, self.mode, self.divisibility)
        return t


def _make_dynamic(t: Any, shape: Tuple[int, ...], strides: List[int], order: Tuple[int, ...],
                  mode: Tuple[int, ...], div: Tuple[int, ...]) -> None:
    """t's layout as CuTe DSL's cutlass_call makes a dynamic one: every extent a runtime Int32 with its
    known divisor, every stride a runtime Int64 known divisible by the product of the divisors of the
    dimensions inside it, but the innermost stride, a static 1 (then the modes in mode's order)."""
    from ...dynamic import DynInt
    from ...dynamic_layout import set_layout
    from ...numeric import Int64

    r = len(shape)
    dshape = [DynInt(shape[i], div=div[i]) for i in range(r)]
    dstride: List[Any] = []
    for i in range(r):
        if order[i] == 0:
            dstride.append(1)
        else:
            inner = 1
            for j in range(r):
                if order[j] < order[i]:
                    inner *= div[j]
            dstride.append(DynInt(strides[i], Int64, div=inner))
    set_layout(t, tuple(dshape[i] for i in mode), tuple(dstride[i] for i in mode))


def buffer_tensor(buf: "_ffi.Buffer", where: str) -> Any:
    """A static row-major cutelab tensor over an XLA buffer, of the buffer's own element type."""
    from ... import numeric as n

    name = _ffi.XLA_DTYPES.get(buf.xla_dtype)
    if name is None or not hasattr(n, name):
        raise TypeError(f"{where}: XLA element type {buf.xla_dtype} (XLA_FFI_DataType) has no cutelab element type")
    r = len(buf.shape)
    return _Leaf(getattr(n, name), tuple(range(r - 1, -1, -1)), tuple(range(r)), True, 256, (1,) * r,
                 where).tensor(buf)


def _host_tensor(address: int, size: int, shape: Tuple[int, ...], strides: Tuple[int, ...], dtype: Any,
                 align: int) -> Any:
    """A cutelab tensor over XLA's host buffer at address (size elements), without a copy."""
    import ctypes

    import numpy as np

    from ...runtime import _from_numpy

    store = np.dtype(dtype.storage)
    if dtype.width < 8:
        raise NotEmulatedError(f"cutlass_call with {dtype} tensors", "sub-byte element types are not passed to "
                               "kernels from JAX yet", where="")
    nbytes = size * store.itemsize
    flat = np.frombuffer((ctypes.c_byte * max(nbytes, 1)).from_address(address), dtype=store, count=size) \
        if size else np.zeros(0, store)
    arr = np.lib.stride_tricks.as_strided(flat, shape=shape, strides=tuple(s * store.itemsize for s in strides))
    t = _from_numpy(arr, min(align, 256) if address % max(align, 1) == 0 else store.itemsize, dtype)
    t.engine.memspace = "gmem"  # XLA's buffers are the (emulated) device's global memory
    return t


class _DeviceBuffer:
    """XLA's GPU buffer as a ``__cuda_array_interface__`` producer (for cutelab's from_dlpack)."""

    def __init__(self, address: int, shape: Tuple[int, ...], strides: Tuple[int, ...], dtype: Any, device: int,
                 where: str):
        import numpy as np

        from ...numeric import numeric_from_numpy

        store = np.dtype(dtype.storage)
        try:
            same = numeric_from_numpy(store) is dtype  # bf16 and fp8 are stored in unsigned ints
        except TypeError:
            same = False
        if not same:
            raise NotEmulatedError(f"cutlass_call on the GPU with {dtype} tensors ({where})",
                                   "only element types numpy names are passed on the GPU path", where="")
        self.__cuda_array_interface__ = {"shape": shape, "typestr": store.str, "version": 3,
                                         "data": (address, False),
                                         "strides": tuple(s * store.itemsize for s in strides)}
        self.device = device

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (2, self.device)  # kDLCUDA


class _Call:
    """What one traced cutlass_call runs: fn over the tensors of XLA's buffers."""

    def __init__(self, fn: Callable, ins: List[Optional[_Leaf]], in_tree: Any, outs: List[_Leaf],
                 kernel_outs: List[Optional[int]], kernel_out_tree: Any, kwargs: Dict[str, Any]):
        self.fn, self.ins, self.in_tree, self.outs = fn, ins, in_tree, outs
        self.kernel_outs, self.kernel_out_tree, self.kwargs = kernel_outs, kernel_out_tree, kwargs
        self.jitted: Any = None

    def __call__(self, in_bufs: List["_ffi.Buffer"], out_bufs: List["_ffi.Buffer"], stream: int) -> None:
        from ...kernel.launch.api import jit
        from ...runtime import CUstream

        it = iter(in_bufs)
        ins = [None if leaf is None else leaf.tensor(next(it)) for leaf in self.ins]
        outs = [None if j is None else self.outs[j].tensor(out_bufs[j]) for j in self.kernel_outs]
        if self.jitted is None:
            self.jitted = jit(self._body)
        self.jitted(CUstream(stream), *ins, *outs)

    def _body(self, stream: Any, *tensors: Any) -> None:
        """Inside one jit, as CuTe DSL's wrapper: fn and the jit functions it calls run inline, its
        keyword arguments stay Python values (compile-time constants)."""
        n = len(self.ins)
        args = jax.tree.unflatten(self.in_tree, list(tensors[:n]))
        kouts = jax.tree.unflatten(self.kernel_out_tree, list(tensors[n:]))
        self.fn(stream, *args, *kouts, **self.kwargs)


_KEYS = itertools.count()
_BY_IDENTITY: Dict[Any, str] = {}


def _register(call: _Call, identity: Any) -> str:
    """The key of call in ffi.CALLS (one per identical configuration where it can be hashed)."""
    try:
        key = _BY_IDENTITY.get(identity)
    except TypeError:
        identity, key = None, None
    if key is None:
        key = f"cutlass_call_{next(_KEYS)}"
        _ffi.CALLS[key] = call
        if identity is not None:
            _BY_IDENTITY[identity] = key
    return key


def _platforms() -> None:
    _ffi.register("cpu")
    try:
        if any(d.platform == "gpu" for d in jax.devices()):
            _ffi.register("cuda")
    except RuntimeError:
        pass


def _specs(spec: Any, leaves: List[Any], what: str) -> List[Optional[TensorSpec]]:
    """One TensorSpec (or None: the default) per present leaf."""
    present = [x for x in leaves if x is not None]
    if spec is None:
        return [None] * len(present)

    def is_leaf(x: Any) -> bool:
        return x is None or isinstance(x, TensorSpec) or (
            isinstance(x, (list, tuple)) and bool(x) and all(isinstance(i, int) for i in x))

    flat = [TensorSpec(mode=tuple(s)) if isinstance(s, (list, tuple)) else s
            for s in jax.tree.leaves(spec, is_leaf=is_leaf)]
    for s in flat:
        if s is not None and not isinstance(s, TensorSpec):
            raise TypeError(f"cutlass_call: {what}_spec holds {s!r}, not a TensorSpec or None")
    if len(flat) == len(present):
        return flat
    if len(flat) == len(leaves):  # mirrors the inputs, None where a tensor is absent
        for s, x in zip(flat, leaves):
            if x is None and s is not None:
                raise ValueError(f"cutlass_call: {what}_spec gives {s} for an absent (None) {what}")
        return [s for s, x in zip(flat, leaves) if x is not None]
    raise ValueError(f"cutlass_call: {what}_spec has {len(flat)} specs for {len(present)} {what} tensors")


def _leaf(x: Any, spec: Optional[TensorSpec], static: bool, where: str) -> _Leaf:
    r = len(x.shape)
    spec = spec or TensorSpec()
    order = _check_perm("layout", spec.layout, r, where) if spec.layout is not None else tuple(range(r - 1, -1, -1))
    mode = _check_perm("mode", spec.mode, r, where) if spec.mode is not None else tuple(range(r))
    st = static if spec.static is None else bool(spec.static)
    if st and any(not isinstance(n, int) for n in x.shape):
        raise ValueError(f"cutlass_call: {where} has the symbolic shape {x.shape}; static tensors need concrete "
                         "extents (use_static_tensors=False or TensorSpec(static=False))")
    div = _divisibility(spec, order, where)
    for i, (n, d) in enumerate(zip(x.shape, div)):
        if isinstance(n, int) and d is not None and n % d:
            raise ValueError(f"cutlass_call: {where} has extent {n} in dimension {i}, not a multiple of its "
                             f"divisibility {d}")
    # as CuTe DSL's: a dimension without a hint is known divisible by its extent where that is concrete
    div = tuple(d if d is not None else (n if isinstance(n, int) and n > 0 else 1) for n, d in zip(x.shape, div))
    return _Leaf(jax_to_cutlass_dtype(x.dtype), order, mode, st, spec.ptr_assumed_align, div, where)


def _aliases(aliases: Any, args: Tuple[Any, ...], outputs: Tuple[Any, ...], in_leaves: List[Any],
             out_count: int) -> Tuple[Dict[int, int], set, set]:
    """Per-buffer aliases {present input index: output index}, the top-level outputs aliased, and the
    key paths of outputs aliased."""
    none = lambda v: v is None  # noqa: E731
    in_paths = [p for p, _ in jax.tree_util.tree_flatten_with_path(args, is_leaf=none)[0]]
    out_paths = [p for p, _ in jax.tree_util.tree_flatten_with_path(outputs)[0]]
    present = {}
    k = 0
    for i, x in enumerate(in_leaves):
        if x is not None:
            present[i] = k
            k += 1
    per_buffer: Dict[int, int] = {}
    top, paths = set(), set()

    def link(i_flat: int, o_flat: int, label: str) -> None:
        a, o = in_leaves[i_flat], _out_avals[o_flat]
        if a is None:
            raise ValueError(f"cutlass_call: input_output_aliases {label}: the input is absent (None)")
        if tuple(a.shape) != tuple(o.shape) or a.dtype != o.dtype:
            raise ValueError(f"cutlass_call: input_output_aliases {label}: input {a.shape} {a.dtype} and output "
                             f"{o.shape} {o.dtype} differ")
        if present[i_flat] in per_buffer or o_flat in per_buffer.values():
            raise ValueError(f"cutlass_call: input_output_aliases {label} uses a buffer twice")
        per_buffer[present[i_flat]] = o_flat

    _out_avals = jax.tree.leaves(outputs)
    for i, o in (aliases or {}).items():
        if isinstance(i, int) and isinstance(o, int) and not isinstance(i, bool):
            if not (0 <= i < len(args)) or not (0 <= o < len(outputs)):
                raise ValueError(f"cutlass_call: input_output_aliases {{{i}: {o}}} is out of range "
                                 f"({len(args)} inputs, {len(outputs)} outputs)")
            ins = [j for j, p in enumerate(in_paths) if p[0].idx == i]
            outs = [j for j, p in enumerate(out_paths) if p[0].idx == o]
            if len(ins) != len(outs):
                raise ValueError(f"cutlass_call: input_output_aliases {{{i}: {o}}}: the input and output pytrees "
                                 "differ")
            for a, b in zip(ins, outs):
                link(a, b, f"{{{i}: {o}}}")
            top.add(o)
        elif isinstance(i, tuple) and isinstance(o, tuple):
            if i not in in_paths or o not in out_paths:
                raise ValueError(f"cutlass_call: input_output_aliases path {i} -> {o} names no tensor")
            link(in_paths.index(i), out_paths.index(o), f"{jax.tree_util.keystr(i)}:{jax.tree_util.keystr(o)}")
            paths.add(o)
        else:
            raise TypeError("cutlass_call: input_output_aliases maps an int to an int or a key path to a key path, "
                            f"got {i!r}: {o!r}")
    return per_buffer, top, paths


def cutlass_call(fn: Callable[..., None], *, output_shape_dtype: Any = None, input_spec: Any = None,
                 output_spec: Any = None, input_mode: Any = None, output_mode: Any = None,
                 input_output_aliases: Any = None, allow_cuda_graph: bool = True, ffi_call_target: Optional[str] = None,
                 compile_options: Optional[str] = None, compile_key: Any = None, use_static_tensors: bool = False,
                 **kwargs: Any) -> Callable[..., Any]:
    """A function of JAX arrays that runs ``fn(stream, *inputs, *outputs, **kwargs)`` (see the module
    docstring); it returns the outputs, shaped as ``output_shape_dtype`` (a sequence: several)."""
    _need_jax("cutlass_call")
    where = user_line(2)
    if output_shape_dtype is None:
        raise ValueError("cutlass_call: 'output_shape_dtype' must be specified")
    if ffi_call_target is not None:
        raise NotEmulatedError(f"cutlass_call(ffi_call_target={ffi_call_target!r})", "cutelab runs the launcher "
                               "through its own custom call, not a target that implements CuTe DSL's binary ABI",
                               where=where)
    if input_spec is not None and input_mode is not None:
        raise ValueError("cutlass_call: input_spec and input_mode can not both be set (input_mode is deprecated)")
    if output_spec is not None and output_mode is not None:
        raise ValueError("cutlass_call: output_spec and output_mode can not both be set (output_mode is deprecated)")
    input_spec = input_mode if input_spec is None else input_spec
    output_spec = output_mode if output_spec is None else output_spec
    multiple = isinstance(output_shape_dtype, Sequence)
    outputs = tuple(output_shape_dtype) if multiple else (output_shape_dtype,)
    outputs = jax.tree.map(lambda o: jax.ShapeDtypeStruct(o.shape, o.dtype), outputs)
    _platforms()

    @jax.jit
    def call(*args: Any) -> Any:
        leaves, in_tree = jax.tree.flatten(args, is_leaf=lambda v: v is None)
        out_leaves, out_tree = jax.tree.flatten(outputs)
        in_specs = _specs(input_spec, leaves, "input")
        out_specs = _specs(output_spec, out_leaves, "output")
        it = iter(in_specs)
        ins = [None if x is None else _leaf(x, next(it), use_static_tensors, f"input {i}")
               for i, x in enumerate(leaves)]
        outs = [_leaf(o, s, use_static_tensors, f"output {j}") for j, (o, s) in enumerate(zip(out_leaves, out_specs))]
        per_buffer, top, paths = _aliases(input_output_aliases, args, outputs, leaves, len(out_leaves))
        for i, o in per_buffer.items():
            a = [x for x in ins if x is not None][i]
            if a.order != outs[o].order:
                raise ValueError(f"cutlass_call: input_output_aliases: {a.where} and output {o} have different "
                                 "physical layouts")
        # the outputs fn gets: all but the aliased ones (top-level: dropped; by key path: None)
        out_paths = [p for p, _ in jax.tree_util.tree_flatten_with_path(outputs)[0]]
        kept = [None if p in paths else j for j, p in enumerate(out_paths) if p[0].idx not in top]
        kernel_outputs = tuple(o for k, o in enumerate(outputs) if k not in top)
        kernel_out_tree = jax.tree.structure(jax.tree.map(lambda _: 0, kernel_outputs))
        run = _Call(fn, ins, in_tree, outs, kept, kernel_out_tree, dict(kwargs))
        identity = (fn, tuple(map(repr, ins)), in_tree, tuple(map(repr, outs)), tuple(kept), kernel_out_tree,
                    tuple(kwargs.items()))
        key = _register(run, identity)
        present = [x for x in leaves if x is not None]
        ffi = jax.ffi.ffi_call(_ffi.TARGET, tuple(out_leaves), input_output_aliases=per_buffer or None,
                               input_layouts=[cutlass_to_jax_layout_order(x.order) for x in ins if x is not None],
                               output_layouts=[cutlass_to_jax_layout_order(x.order) for x in outs])
        result = ffi(*present, **{_ffi.ATTR: key})
        result = jax.tree.unflatten(out_tree, list(result))
        return result if multiple else result[0]

    return call


def get_export_disabled_safety_checks() -> List[Any]:
    """The jax.export safety checks a function with cutlass_call needs disabled: its custom call's."""
    _need_jax("get_export_disabled_safety_checks")
    return [jax.export.DisabledSafetyCheck.custom_call(_ffi.TARGET)]


def from_dlpack(array: Any, assumed_align: int = 256) -> Any:
    """A cutelab tensor viewing a JAX array (host memory) or any DLPack producer."""
    from ...runtime import from_dlpack as _from_dlpack

    return _from_dlpack(array, assumed_align=assumed_align)


def release_compile_cache() -> None:
    """CuTe DSL frees its compiled binaries; cutelab keeps none outside the jit functions' own caches,
    so this forgets nothing that a later call could need."""


def register_ffi(version: Optional[int] = None) -> None:
    """Register cutelab's custom call with XLA (cutlass_call does it by itself)."""
    _need_jax("register_ffi")
    _platforms()


def is_ffi_registered(version: Optional[int] = None, *, name: Optional[str] = None) -> bool:
    """Whether cutelab's custom call is registered (for the CPU)."""
    return "cpu" in _ffi._REGISTERED and name in (None, _ffi.TARGET)


def get_cutlass_call_ffi_name(allow_cuda_graph: bool = True, version: Optional[int] = None) -> str:
    """The custom-call target cutlass_call emits."""
    return _ffi.TARGET


def get_cutlass_call_ffi_version() -> int:
    """The version of the custom call's interface (cutelab's own: 1)."""
    return 1


def find_cute_dsl_runtime_library() -> Optional[str]:
    """CuTe DSL's runtime library: cutelab needs none."""
    return None


def disable_automatic_ffi_registration() -> None:
    """Refused: cutlass_call's custom call is cutelab's, registered when first needed."""
    raise NotEmulatedError("cutlass.jax.disable_automatic_ffi_registration()", "cutelab registers its own custom "
                           "call (it does not load CuTe DSL's runtime library)", where=user_line(2))


def set_ffi_call_targets(*args: Any, **kwargs: Any) -> None:
    """Refused: cutelab's custom call has one target."""
    raise NotEmulatedError("cutlass.jax.set_ffi_call_targets()", "cutelab's cutlass_call has one custom-call "
                           "target of its own", where=user_line(2))


def __getattr__(name: str) -> Any:
    if name == "testing":
        from . import testing

        return testing
    raise AttributeError(f"module 'cutlass.jax' (cutelab) has no attribute {name!r}")
