"""``cutlass._mlir.dialects.llvm``: ``inline_asm`` of a PTX instruction cutelab knows becomes that
operation of its kernel IR (the interpreter runs it on the CPU, the CUDA printer prints it);
any other instruction raises NotEmulatedError naming it and the user's line.

Known: ``{lg2,ex2,rsqrt,sqrt,rcp,tanh,sin,cos}.approx[.ftz].f32``, ``sqrt.rn.f32``,
``{add,sub,mul,min,max}[.rn][.ftz].f32``, ``fma.rn[.ftz].f32``, ``mov.b32``, ``abs[.ftz].f32``,
``neg.f32`` -- one instruction, results ``$0``, operands ``$1...`` in order.

>>> inline_asm(None, [2.0, 3.0, 1.0], "fma.rn.f32 $0, $1, $2, $3;", "=f,f,f,f")
7.0
>>> inline_asm(None, [4.0], "rsqrt.approx.ftz.f32 $0, $1;", "=f,f")
0.5
"""

from __future__ import annotations

import enum
import re
from typing import Any, Sequence

from ...where import NotEmulatedError, user_line
from ..refused import module_getattr


class AsmDialect(enum.Enum):
    AD_ATT = 0
    AD_Intel = 1


_UNARY = {"lg2": "log2", "ex2": "exp2", "rsqrt": "rsqrt", "sqrt": "sqrt", "tanh": "tanh", "sin": "sin", "cos": "cos",
          "abs": "abs"}
_BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b}


def _value(x: Any) -> Any:
    return x.ir_value() if hasattr(x, "ir_value") else x


def inline_asm(res: Any, operands: Sequence[Any], asm_string: str, constraints: str, has_side_effects: bool = False,
               is_align_stack: bool = False, asm_dialect: Any = None, operand_attrs: Any = None, *, loc: Any = None,
               ip: Any = None) -> Any:
    """The PTX instruction asm_string applied to operands (see the module's docstring)."""
    where = user_line(2)
    text = asm_string.strip()
    insts = [s.strip() for s in text.split(";") if s.strip()]
    if len(insts) != 1 or "{" in text:
        raise NotEmulatedError(f"llvm.inline_asm({text!r})", "cutelab interprets one PTX instruction of the forms "
                               "its llvm module lists", where=where)
    m = re.fullmatch(r"([a-z0-9_.:]+)\s+(.*)", insts[0])
    if m is None:
        raise NotEmulatedError(f"PTX instruction {insts[0]!r} (llvm.inline_asm)", where=where)
    opcode, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
    parts = opcode.split(".")
    base, mods = parts[0], set(parts[1:])
    ops = [_value(x) for x in operands]
    refs = []
    for a in args:
        mm = re.fullmatch(r"\$(\d+)", a)
        if mm is None:
            raise NotEmulatedError(f"PTX operand {a!r} of {insts[0]!r} (llvm.inline_asm)", where=where)
        refs.append(int(mm.group(1)))
    n_out = constraints.count("=")
    if n_out != 1 or refs[0] != 0:
        raise NotEmulatedError(f"llvm.inline_asm({text!r}) with {n_out} results",
                               "cutelab interprets instructions with one result $0", where=where)
    try:
        srcs = [ops[r - 1] for r in refs[1:]]
    except IndexError:
        raise ValueError(f"llvm.inline_asm({text!r}): an operand number exceeds the {len(ops)} operands given "
                         f"({where})") from None
    f32 = "f32" in mods
    if f32 and base in _UNARY and len(srcs) == 1 and (base in ("abs", "sqrt") or "approx" in mods):
        from ...dsl_names import _abs
        from ....kernel.instr.mathops import _apply

        return _abs(srcs[0]) if base == "abs" else _apply(_UNARY[base], srcs[0])
    if f32 and base == "rcp" and len(srcs) == 1:
        return 1.0 / srcs[0]
    if f32 and base == "neg" and len(srcs) == 1:
        return -srcs[0]
    if f32 and base in _BINARY and len(srcs) == 2:
        return _BINARY[base](*srcs)
    if f32 and base in ("min", "max") and len(srcs) == 2:
        from ....kernel.frontend.control import max_, min_

        return (min_ if base == "min" else max_)(*srcs)
    if f32 and base == "fma" and len(srcs) == 3:
        return srcs[0] * srcs[1] + srcs[2]
    if base == "mov" and mods <= {"b32", "f32", "u32", "s32"} and len(srcs) == 1:
        return srcs[0]
    raise NotEmulatedError(f"PTX instruction {opcode!r} (llvm.inline_asm {text!r})",
                           "cutelab's llvm.inline_asm knows the instructions its module docstring lists", where=where)


__getattr__ = module_getattr("cutlass._mlir.dialects.llvm")
