"""``cutlass.base_dsl`` (and its submodules typing, arch, dsl, ast_preprocessor, ...), as cutelab has them.

``Arch`` and ``get_arch_enum()`` name the target (the GPU's, else CUTE_DSL_ARCH, else sm_90a);
``typing`` holds the numeric types and ``Constexpr``; the names of CuTe DSL's compiler machinery
(its preprocessor, its MLIR executor) have no counterpart and raise NotEmulatedError when used.

>>> Arch.sm_90a >= Arch.sm_80, Arch.sm_100a.major, Arch.from_string("sm_90a") is Arch.sm_90a
(True, 10, True)
>>> Arch.sm_90a.is_family_of(Arch.sm_90a), Arch.sm_90.is_family_of(Arch.sm_90a), Arch.sm_103f.is_family_of(Arch.sm_100f)
(True, False, True)
"""

from __future__ import annotations

import dataclasses
import enum
import os
import re
import sys
import types
from typing import Any, List

from ..kernel.frontend.control import dsl_user_op  # noqa: F401
from ..kernel.launch.args import Constexpr  # noqa: F401
from ..kernel.launch.compiled import CompiledFunction as JitCompiledFunction  # noqa: F401 - base_dsl.jit_executor's
from ..numeric import (  # noqa: F401 - cutlass.base_dsl.typing's numeric names
    BFloat16, Boolean, Float8E4M3FN, Float8E5M2, Float16, Float32, Float64, Int8, Int16, Int32, Int64, Numeric,
    TFloat32, Uint8, Uint16, Uint32, Uint64,
    Float4E2M1FN, Float6E2M3FN, Float6E3M2FN, Float8E8M0FNU, Float8E4M3, Float, FloatMeta, Int4, Int128, Integer, IntegerMeta,
    NumericMeta, Uint128,
)
from ..errors import CudaRuntimeError as DSLCudaRuntimeError  # noqa: F401 - cutlass.base_dsl.common's
from .where import refuse
from .tvm_ffi_spec import spec  # noqa: F401 - cutlass.base_dsl.tvm_ffi_builder.spec

__path__: list = []


class Arch(enum.Enum):
    """GPU architectures CuTe DSL targets; ordered by (major, minor); suffix a/f as in sm_90a."""

    sm_80 = "sm_80"
    sm_86 = "sm_86"
    sm_87 = "sm_87"
    sm_89 = "sm_89"
    sm_90 = "sm_90"
    sm_90a = "sm_90a"
    sm_100 = "sm_100"
    sm_100a = "sm_100a"
    sm_100f = "sm_100f"
    sm_103 = "sm_103"
    sm_103a = "sm_103a"
    sm_103f = "sm_103f"
    sm_107 = "sm_107"
    sm_107a = "sm_107a"
    sm_107f = "sm_107f"
    sm_110 = "sm_110"
    sm_110a = "sm_110a"
    sm_110f = "sm_110f"
    sm_101 = "sm_110"  # CuTe DSL 4.8.1 names sm_101 as an alias of sm_110 (Thor's new number)
    sm_101a = "sm_110a"
    sm_101f = "sm_110f"
    sm_120 = "sm_120"
    sm_120a = "sm_120a"
    sm_120f = "sm_120f"
    sm_121 = "sm_121"
    sm_121a = "sm_121a"
    sm_121f = "sm_121f"

    @property
    def major(self) -> int:
        return int(re.fullmatch(r"sm_(\d+)(\d)[a-z]?", self.value).group(1))

    @property
    def minor(self) -> int:
        return int(re.fullmatch(r"sm_(\d+)(\d)[a-z]?", self.value).group(2))

    @property
    def suffix(self) -> str:
        return re.fullmatch(r"sm_\d+([a-z]?)", self.value).group(1)

    def _key(self) -> tuple:
        return (self.major, self.minor)

    def __lt__(self, o: "Arch") -> bool:
        return self._key() < o._key()

    def __le__(self, o: "Arch") -> bool:
        return self._key() <= o._key()

    def __gt__(self, o: "Arch") -> bool:
        return self._key() > o._key()

    def __ge__(self, o: "Arch") -> bool:
        return self._key() >= o._key()

    @classmethod
    def from_string(cls, s: str) -> "Arch":
        try:
            return cls[str(s).strip()]  # by name, as CuTe DSL: the sm_101 aliases too
        except KeyError:
            pass
        try:
            return cls(str(s).strip())
        except ValueError:
            raise ValueError(f"Arch.from_string({s!r}): not an architecture CuTe DSL knows") from None

    def __str__(self) -> str:
        return self.value

    def to_string(self) -> str:
        return self.value

    def is_family_of(self, arch: "Arch") -> bool:
        """Whether this arch is arch or a later one of its family with family features (suffix a or f),
        as CuTe DSL 4.8.1 defines it: sm_103f.is_family_of(sm_100f), not sm_90.is_family_of(sm_90a)."""
        return self.major == arch.major and self.minor >= arch.minor and self.suffix in ("a", "f")

    def can_run_binary_built_for(self, target: "Arch") -> bool:
        """Whether a GPU of this arch runs a binary built for target: an 'a' target only on that arch,
        others on the same major with at least target's minor (CuTe DSL 4.8.1)."""
        if self is target:
            return True
        if self.major != target.major:
            return False
        if target.suffix == "a":
            return False
        return self.minor >= target.minor

    @classmethod
    def filter(cls, criterion) -> list:
        return [a for a in cls if criterion(a)]


class T:
    """MLIR type builders of the DSL (``T.i32()``, ``T.f16()``, ``T.vector(4, T.f32())``)."""

    i1 = staticmethod(lambda: Boolean)
    bool = staticmethod(lambda: Boolean)
    i8 = staticmethod(lambda: Int8)
    i16 = staticmethod(lambda: Int16)
    i32 = staticmethod(lambda: Int32)
    i64 = staticmethod(lambda: Int64)
    f16 = staticmethod(lambda: Float16)
    bf16 = staticmethod(lambda: BFloat16)
    f32 = staticmethod(lambda: Float32)
    f64 = staticmethod(lambda: Float64)
    tf32 = staticmethod(lambda: TFloat32)

    @staticmethod
    def vector(n: int, elem: Any) -> Any:
        return ("vector", int(n), elem)

    @staticmethod
    def ptr(*a: Any, **k: Any) -> Any:
        return refuse("cutlass.cutlass_dsl.T.ptr", "pointer types of MLIR's llvm dialect are not in cutelab")(*a, **k)


# the protocol by which user types carry runtime values (base_dsl.utils.mlir_value_tree in CuTe DSL)

def _static(obj: Any) -> bool:
    """A compile-time constant, for which CuTe DSL's extract_mlir_values gives no value: None, a Python
    int, float, bool or str (exact types), an enum member, a class."""
    return obj is None or type(obj) in (int, float, bool, str) or isinstance(obj, (enum.Enum, type))


def extract_mlir_values(obj: Any, *, structured: bool = False) -> Any:
    """The runtime values obj carries (its __extract_mlir_values__, or its fields/items): flattened into a
    list, none for a compile-time constant (``_static``: a scheduler's cluster shape, its persistence mode, as
    in CuTe DSL, so that an object that forwards its fields' values (quack's tile scheduler) carries those
    through a runtime region unchanged); or with ``structured`` as a tree (what __extract_mlir_values__
    gives, a dataclass's or namespace's fields as a dict, a list's or tuple's items as a list, None for None,
    a value itself)."""
    from ..kernel.frontend.carry_obj import flatten_tree

    if structured:
        if hasattr(obj, "__extract_mlir_values__") and not isinstance(obj, type):
            return obj.__extract_mlir_values__()
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return {f.name: extract_mlir_values(getattr(obj, f.name), structured=True) for f in dataclasses.fields(obj)}
        if isinstance(obj, types.SimpleNamespace):
            return {k: extract_mlir_values(v, structured=True) for k, v in vars(obj).items()}
        if isinstance(obj, (list, tuple)):
            return [extract_mlir_values(x, structured=True) for x in obj]
        return obj
    if hasattr(obj, "__extract_mlir_values__") and not isinstance(obj, type):
        return flatten_tree(obj.__extract_mlir_values__())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [v for f in dataclasses.fields(obj) for v in extract_mlir_values(getattr(obj, f.name))]
    if isinstance(obj, types.SimpleNamespace):
        return [v for x in vars(obj).values() for v in extract_mlir_values(x)]
    if isinstance(obj, (list, tuple)):
        return [v for x in obj for v in extract_mlir_values(x)]
    if _static(obj):
        return []
    return [obj]


def _count(obj: Any) -> int:
    return len(extract_mlir_values(obj))


def new_from_mlir_values(obj: Any, values: Any, *, structured: bool = False) -> Any:
    """obj rebuilt around values: a flat list (as many as extract_mlir_values(obj) gave, in that order),
    or with ``structured`` a tree shaped as extract_mlir_values(obj, structured=True) gave it. An object of
    the protocol gets values as they are (its __new_from_mlir_values__); a constant takes none."""
    if not structured and _static(obj):
        values = list(values)
        if values:
            raise ValueError(f"new_from_mlir_values: the constant {obj!r} takes no values, got {len(values)}")
        return obj
    if hasattr(obj, "__new_from_mlir_values__"):
        return obj.__new_from_mlir_values__(values)
    if structured:
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return dataclasses.replace(obj, **{f.name: new_from_mlir_values(getattr(obj, f.name), values[f.name],
                                                                            structured=True)
                                               for f in dataclasses.fields(obj) if f.init})
        if isinstance(obj, types.SimpleNamespace):
            return types.SimpleNamespace(**{k: new_from_mlir_values(v, values[k], structured=True)
                                            for k, v in vars(obj).items()})
        if isinstance(obj, (list, tuple)):
            out = [new_from_mlir_values(x, v, structured=True) for x, v in zip(obj, values)]
            return type(obj)(out) if isinstance(obj, list) or type(obj) is tuple else type(obj)(*out)
        return obj if obj is None else values
    values = list(values)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        kw, i = {}, 0
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            n = _count(v)
            kw[f.name] = new_from_mlir_values(v, values[i:i + n])
            i += n
        return dataclasses.replace(obj, **kw)
    if isinstance(obj, (list, tuple)):
        out, i = [], 0
        for x in obj:
            n = _count(x)
            out.append(new_from_mlir_values(x, values[i:i + n]))
            i += n
        return type(obj)(out) if isinstance(obj, list) or type(obj) is tuple else type(obj)(*out)
    if len(values) != 1:
        raise ValueError(f"new_from_mlir_values: {type(obj).__name__} takes one value, got {len(values)}")
    return values[0]


# base_dsl.dynamic_debug: what each runtime region of a kernel carries as values, printed as it is traced
# (kernel/frontend/carry_obj.py: DEBUG, debug_region)

def set_dynamic_debug(enabled: bool, max_depth: Any = None) -> None:
    """Print, as each runtime loop or branch is traced, the objects it carries by their values (their
    value trees and how many values they make); ``max_depth`` as CuTe DSL's (cutelab reports every
    region at level 0)."""
    from ..kernel.frontend.carry_obj import DEBUG

    DEBUG["enabled"], DEBUG["max_depth"] = bool(enabled), max_depth


def get_dynamic_debug() -> Any:
    """(enabled, max_depth, current depth) as set_dynamic_debug left them (the depth is always 0)."""
    from ..kernel.frontend.carry_obj import DEBUG

    return DEBUG["enabled"], DEBUG["max_depth"], 0


def should_print_dynamic_debug() -> bool:
    from ..kernel.frontend.carry_obj import DEBUG

    return DEBUG["enabled"] and (DEBUG["max_depth"] is None or DEBUG["max_depth"] >= 0)


def debug_print_mlir_values(obj: Any, indent: int = 0, name: Any = None, types_only: bool = False) -> str:
    """A tree of the values obj carries, one line per member (its leaves by their types), as CuTe DSL's."""
    from ..kernel.frontend.carry_obj import _dtype, _tree_text

    pre = "  " * indent
    head = f"{pre}{name or type(obj).__name__}"
    if obj is None:
        return f"{head}: (none)"
    if hasattr(obj, "__extract_mlir_values__"):
        tree = obj.__extract_mlir_values__()
        if isinstance(tree, (dict, list, tuple)):
            return "\n".join([f"{head}:"] + _tree_text(tree, pre + "  "))
        return f"{head}:\n{pre}  value: {_dtype(tree) if _dtype(tree) is not None else tree}"
    if isinstance(obj, dict):
        return f"{head}: dict with {len(obj)} items"
    if isinstance(obj, (list, tuple)):
        return f"{head}: [{len(obj)} items]"
    dt = _dtype(obj)
    return f"{head}: {dt if dt is not None and types_only else obj}"


def get_arch_enum() -> Arch:
    """The target: the GPU's architecture (sm_90 -> sm_90a), else CUTE_DSL_ARCH, else sm_90a."""
    env = os.environ.get("CUTE_DSL_ARCH")
    if env:
        return Arch.from_string(env)
    compat = sys.modules.get("cutelab.compat")
    if compat is None or not compat.emulating():
        from ..kernel.cuda.driver import device_arch, gpu_available

        if gpu_available():
            a = device_arch()
            return Arch.from_string(a + "a" if a in ("sm_90", "sm_100", "sm_103", "sm_120") else a)
    return Arch.sm_90a


class _Typing:
    pass


typing = sys.modules[__name__]  # cutlass.base_dsl.typing: this module (its numeric types, Constexpr, ...)

class _DSLObject:
    """What ``BaseDSL._get_dsl()`` returns: the target (``get_arch_enum``); every other member of CuTe
    DSL's compiler object raises NotEmulatedError naming it."""

    def __init__(self, name: str) -> None:
        self._name = name

    def get_arch_enum(self) -> Arch:
        return get_arch_enum()

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return refuse(f"cutlass.base_dsl.{self._name}._get_dsl().{attr}",
                      "CuTe DSL's MLIR compiler object has no cutelab counterpart")

    def __repr__(self) -> str:
        return f"<{self._name} (cutelab: the target only)>"


class BaseDSL:
    """``cutlass.base_dsl.BaseDSL``: libraries ask it for the target
    (``BaseDSL._get_dsl().get_arch_enum()``); constructing it raises NotEmulatedError.

    >>> BaseDSL._get_dsl().get_arch_enum() == get_arch_enum()
    True
    """

    def __init__(self, *args, **kwargs) -> None:
        refuse(f"cutlass.base_dsl.{type(self).__name__}()",
               "CuTe DSL's MLIR compiler object has no cutelab counterpart")()

    @classmethod
    def _get_dsl(cls) -> _DSLObject:
        return _DSLObject(cls.__name__)


# cutlass.base_dsl.runtime (this module): its ``cuda`` helpers load CuTe DSL's cubins, which cutelab
# does not make; libraries keep the originals before patching them, so they import, and raise when called
runtime = sys.modules[__name__]
cuda = types.ModuleType("cutlass.base_dsl.runtime.cuda", "cutlass.base_dsl.runtime.cuda as cutelab has it")
cuda.__dict__.update({n: refuse(f"cutlass.base_dsl.runtime.cuda.{n}", "cutelab loads no CuTe DSL cubins")
                      for n in ("load_cubin_module_data", "load_cubin_module", "get_kernel_function")})


def checkCudaErrors(result: Any) -> Any:  # noqa: N802 - CuTe DSL's name
    """CuTe DSL's ``checkCudaErrors``: the results of a cuda-python call without its status (None for
    none, the value for one, a tuple for several); a status other than success raises
    DSLCudaRuntimeError with its code and name.

    >>> checkCudaErrors((0, 7)), checkCudaErrors((0,)), checkCudaErrors((0, 1, 2))
    (7, None, (1, 2))
    """
    status = result[0]
    code = int(getattr(status, "value", status))
    if code:
        raise DSLCudaRuntimeError(code, getattr(status, "name", f"CUDA error {code}"))
    if len(result) == 1:
        return None
    return result[1] if len(result) == 2 else tuple(result[1:])


cuda.checkCudaErrors = checkCudaErrors
DSLPreprocessor = refuse("cutlass.base_dsl.ast_preprocessor.DSLPreprocessor",
                         "cutelab rewrites kernels with its own AST pass (cutelab.kernel.frontend.rewrite)")
JitExecutor = refuse("cutlass.base_dsl.jit_executor.JitExecutor", "cutelab runs compiled kernels itself")
