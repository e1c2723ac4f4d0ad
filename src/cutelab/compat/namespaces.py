"""The modules that ``cutlass``, ``cutlass.cute``, ``cute.arch``, ``cute.math``, ... stand for
under the hook: each is a view of cutelab's module of that role, plus the DSL names cutelab's own
API does not carry (``extras``), from the façades of this package.

A name found nowhere is an AttributeError naming the DSL path (``cutlass.cute.foo``) and the
user's line; a name known to be missing (``MISSING``) raises NotEmulatedError when used.
"""

from __future__ import annotations

from typing import Any, Dict

from .where import NotEmulatedError, user_line


from .namespace import Namespace, _loc_tolerant  # noqa: F401  (the class; kept importable from here)


def _dsl_extras() -> Dict[str, Any]:
    from . import cutlass_dsl, dsl_names

    return {**dsl_names.CUTLASS_EXTRAS, "extract_mlir_values": cutlass_dsl.extract_mlir_values,
            "new_from_mlir_values": cutlass_dsl.new_from_mlir_values, "target_version": cutlass_dsl.target_version}


def _cute_extras() -> Dict[str, Any]:
    import cutelab

    from . import dsl_names

    # CuTe DSL exports cute.math's functions as cute.<name> too (cute.erf): those cutelab's top level lacks
    math_names = {n: v for n, v in dsl_names.MATH_EXTRAS.items() if not hasattr(cutelab, n)}
    return {**math_names, **dsl_names.CUTE_EXTRAS}


def _arch_extras() -> Dict[str, Any]:
    from . import base_dsl, dsl_names

    return {**dsl_names.ARCH_EXTRAS, "Arch": base_dsl.Arch}  # cute.arch re-exports base_dsl's Arch


def _math_extras() -> Dict[str, Any]:
    from . import dsl_names

    return dsl_names.MATH_EXTRAS


def _runtime_extras() -> Dict[str, Any]:
    from . import tvm_ffi

    return tvm_ffi.RUNTIME_EXTRAS


def _testing_extras() -> Dict[str, Any]:
    from . import dsl_testing

    return dsl_testing.EXTRAS


def _torch_extras() -> Dict[str, Any]:
    from . import dsl_torch

    return dsl_torch.EXTRAS


def _utils_extras() -> Dict[str, Any]:
    from . import dsl_clc, dsl_grouped, dsl_utils

    return {**dsl_utils.EXTRAS, "ClcDynamicPersistentTileScheduler": dsl_clc.ClcDynamicPersistentTileScheduler,
            "ClcDynamicPersistentTileSchedulerParams": dsl_clc.ClcDynamicPersistentTileSchedulerParams,
            **{n: getattr(dsl_grouped, n) for n in dsl_grouped.__all__}}  # the grouped GEMM's scheduler and search


cutlass = Namespace("cutlass", ["cutelab"], _dsl_extras, "cutlass (nvidia-cutlass-dsl), as cutelab")
cute = Namespace("cutlass.cute", ["cutelab"], _cute_extras, "cutlass.cute, as cutelab")
arch = Namespace("cutlass.cute.arch", ["cutelab.kernel.arch"], _arch_extras)
math = Namespace("cutlass.cute.math", ["cutelab.kernel.instr.mathops"], _math_extras)
runtime = Namespace("cutlass.cute.runtime", ["cutelab.runtime"], _runtime_extras)
testing = Namespace("cutlass.cute.testing", ["cutelab.testing"], _testing_extras)
torch = Namespace("cutlass.torch", ["cutelab.torch"], _torch_extras)
utils = Namespace("cutlass.utils", ["cutelab.utils"], _utils_extras)

cutlass.__dict__["cute"] = cute
for _n, _m in (("arch", arch), ("math", math), ("runtime", runtime), ("testing", testing)):
    cute.__dict__[_n] = _m
cutlass.__dict__["torch"] = torch
cutlass.__dict__["testing"] = testing  # from cutlass import testing: the module with its extras, as cutlass.testing
cutlass.__dict__["utils"] = utils
cutlass.__dict__["testing"] = testing  # cutlass.testing is cute.testing in CuTe DSL (the same module)


def refuse_missing(names: Dict[str, str]) -> Dict[str, Any]:
    """{name: why} -> {name: a function raising NotEmulatedError(name, why) when called}."""
    from .where import refuse

    return {n: refuse(n, why) for n, why in names.items()}


__all__ = ["Namespace", "cutlass", "cute", "arch", "math", "runtime", "testing", "torch", "utils",
           "NotEmulatedError", "user_line"]
