"""``cutlass.base_dsl.tvm_ffi_builder.spec`` and ``cutlass.cute._tvm_ffi_args_spec_converter``.

CuTe DSL describes a TVM-FFI function's arguments with ``spec.Param`` records, made by the
converter module's ``_convert_single_arg``. Libraries reach into both: quack patches
``_convert_single_arg`` so that ``Constexpr``-annotated fields become ``spec.ConstNone`` (passed as
None at the call, their compile-time value baked in). cutelab's compiled functions take their
arguments directly (:mod:`.tvm_ffi`), so no spec is built: the records exist so such code imports
and its patch can be installed, and calling the converter itself raises NotEmulatedError.

>>> ConstNone("flag").name, ConstInt("n", 3).value, isinstance(ConstNone("x"), Param)
('flag', 3, True)
"""

from __future__ import annotations

import sys
from typing import Any

from .where import refuse

spec = sys.modules[__name__]  # ``from cutlass.base_dsl.tvm_ffi_builder import spec``


class Param:
    """A TVM-FFI argument description: its name and the keywords it was made with."""

    def __init__(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.name = name
        self.args = args
        for k, v in kwargs.items():
            setattr(self, k, v)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class Var(Param):
    pass


class Shape(Param):
    pass


class Tensor(Param):
    pass


class Stream(Param):
    pass


class EnvStream(Param):
    pass


class DataPointer(Param):
    pass


class ConstNone(Param):
    pass


class _Const(Param):
    def __init__(self, name: str, value: Any) -> None:
        super().__init__(name)
        self.value = value


class ConstInt(_Const):
    pass


class ConstBool(_Const):
    pass


class ConstFloat(_Const):
    pass


class TupleParam(Param):
    def __init__(self, name: str, params: list) -> None:
        super().__init__(name)
        self.params = list(params)


_WHY = "cutelab's compiled functions take their arguments directly and build no TVM-FFI argument spec"
_convert_single_arg = refuse("cutlass.cute._tvm_ffi_args_spec_converter._convert_single_arg", _WHY)
_tvm_ffi_args_spec_converter = refuse("cutlass.cute._tvm_ffi_args_spec_converter._tvm_ffi_args_spec_converter", _WHY)
signature = refuse("cutlass.base_dsl.tvm_ffi_builder.spec.signature", _WHY)
