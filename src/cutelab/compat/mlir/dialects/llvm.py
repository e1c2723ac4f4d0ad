"""``cutlass._mlir.dialects.llvm``: ``inline_asm`` of PTX, ``extractvalue`` of its results, and the
pointer casts a program makes before an NVVM op (``PointerType.get``, ``addrspacecast``: the same pointer).

Inside a kernel, ``inline_asm`` becomes one op of cutelab's kernel IR (kernel/instr/inline_asm.py):
printed as ``asm volatile`` with the program's text and constraints on the GPU, run by cutelab's
PTX interpreter (kernel/instr/ptx.py, which lists the instructions it knows) on the CPU. With
static operands it runs at once. An instruction the interpreter does not know raises
NotEmulatedError naming it and the user's line.

>>> inline_asm(None, [2.0, 3.0, 1.0], "fma.rn.f32 $0, $1, $2, $3;", "=f,f,f,f")
7.0
>>> inline_asm(None, [4.0], "rsqrt.approx.ftz.f32 $0, $1;", "=f,f")
0.5
>>> inline_asm(None, [0x11223344, 0x55667788], "prmt.b32 $0, $1, $2, 0x5410;", "=r,r,r") == 0x77883344
True
"""

from __future__ import annotations

import enum
from typing import Any, Sequence

from ....kernel.frontend.c_abi import CPointerType
from ...where import NotEmulatedError, user_line
from ..refused import module_getattr


class AsmDialect(enum.Enum):
    AD_ATT = 0
    AD_Intel = 1


def inline_asm(res: Any, operands: Sequence[Any], asm_string: str, constraints: str, has_side_effects: bool = False,
               is_align_stack: bool = False, asm_dialect: Any = None, operand_attrs: Any = None, *, loc: Any = None,
               ip: Any = None) -> Any:
    """The PTX program asm_string applied to operands (see the module's docstring)."""
    from ....kernel.instr.inline_asm import NotInterpreted
    from ....kernel.instr.inline_asm import inline_asm as _inline_asm

    where = user_line(2)
    try:
        return _inline_asm(res, operands, asm_string, constraints, where)
    except NotInterpreted as e:
        raise NotEmulatedError(f"{e.instr} (llvm.inline_asm)", str(e), where=where) from None


def extractvalue(res: Any, container: Any, position: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """Element ``position[0]`` of the results of a multi-output ``inline_asm`` (a tuple here), or field
    ``position`` of a struct value a ``JitArgument`` passes (an ``ir.Value``): a struct as a Value, a
    pointer as its address, a number as a runtime value of its type (``res``)."""
    from ....kernel.frontend.c_abi import CAggregate

    pos = list(position) if isinstance(position, (list, tuple)) else [position]
    agg = getattr(container, "_aggregate", container)
    if isinstance(agg, CAggregate):
        v: Any = agg
        for p in pos:
            if not isinstance(v, CAggregate) or not 0 <= int(p) < len(v.fields):
                raise NotEmulatedError(f"llvm.extractvalue(..., {list(position)})", f"the value {agg.type} has no "
                                       f"field at this position", where=user_line(2))
            v = v.fields[int(p)]
        if isinstance(v, CAggregate):
            from ..ir import Value

            return Value(CAggregate(res if isinstance(res, dict) else v.type, v.fields))
        if isinstance(res, PointerType) or not hasattr(res, "kind"):
            return v  # an address
        from ....kernel.frontend.c_abi import runtime_value

        return runtime_value(res, v)
    if not isinstance(container, tuple):
        raise NotEmulatedError("llvm.extractvalue", "cutelab extracts the results of inline_asm with several "
                               "outputs, and the fields of a JitArgument's struct value, only", where=user_line(2))
    return container[int(pos[0])]


class PointerType(CPointerType):
    """``llvm.PointerType.get(address_space)``: a pointer type; cutelab's pointers keep their memory, so
    it only names the space (for ``addrspacecast``), and is 8 bytes in a JitArgument's struct."""

    @staticmethod
    def get(address_space: Any = 0, context: Any = None) -> "PointerType":
        return PointerType(address_space)


class StructType:
    """``llvm.StructType``: ``get_literal([types])`` is a C struct of the types (kernel/frontend/c_abi.py)."""

    @staticmethod
    def get_literal(types: Sequence[Any], *, packed: bool = False, context: Any = None) -> Any:
        from ....kernel.frontend.c_abi import CStructType

        if packed:
            raise NotEmulatedError("llvm.StructType.get_literal(..., packed=True)", "cutelab lays structs out "
                                   "with C's alignment only", where=user_line(2))
        return CStructType(types)


def addrspacecast(res: Any, arg: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """``llvm.addrspacecast``: the same pointer (cutelab's pointers are their memory and an offset; the
    instruction that takes it reads the address space it needs)."""
    if not isinstance(res, PointerType):
        raise NotEmulatedError("llvm.addrspacecast", "cutelab casts pointers to an llvm.PointerType only",
                               where=user_line(2))
    return arg


_refused_getattr = module_getattr("cutlass._mlir.dialects.llvm")


def __getattr__(name: str) -> Any:
    return _refused_getattr(name)
