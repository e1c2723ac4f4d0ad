"""Inline PTX in a kernel (``llvm.inline_asm``, ``cute.arch.inline_ptx``): one IR op that the CUDA
printer prints as ``asm volatile(...)`` with the program's own text and constraints, and that
the CPU interpreter runs with the PTX interpreter (``instr.ptx``) for every thread at once.

``inline_asm(res, operands, asm, constraints)`` traces it: outputs are the constraints
``=r =l =f =d =h`` (``$0 ...``), inputs follow (``r l f d h n``; a digit ties an input to that
output). Its result is a runtime value of ``res`` (a cutlass type; for several outputs a
tuple, one per output). With static operands only, and no thread-dependent instruction, the
program runs at once and gives a Python number, as outside a kernel.
"""

from __future__ import annotations

import re
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ...errors import TraceError
from ..ir.nodes import Op
from .ptx import CONSTRAINT_BITS, Lanes, NotInterpreted, Program, PtxError, parse

__all__ = ["InlineAsmOp", "inline_asm", "NotInterpreted"]

_C_TYPE = {"r": "unsigned int", "l": "unsigned long long", "f": "float", "d": "double", "h": "unsigned short",
           "c": "unsigned short", "n": "unsigned long long", "i": "unsigned long long"}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _instr(e: PtxError) -> str:
    return str(e).split(" (in ")[0]


def _default_dtype(letter: str) -> Any:
    from ...numeric import Float32, Float64, Int16, Int32, Int64

    return {"r": Int32, "l": Int64, "f": Float32, "d": Float64, "h": Int16, "c": Int16}[letter]


def _bits_of_storage(col: np.ndarray) -> np.ndarray:
    col = np.ascontiguousarray(col)
    return col.view(_UINT[col.dtype.itemsize]).astype(np.uint64)


def _storage_of_bits(bits: np.ndarray, dtype: Any) -> np.ndarray:
    st = np.dtype(dtype.storage)
    return bits.astype(_UINT[st.itemsize]).view(st)


def _static_bits(v: Any, letter: str) -> int:
    """A Python number given for an input of constraint letter, as the bits the register holds."""
    from ...numeric import FloatValue

    if isinstance(v, bool):
        v = int(v)
    if letter == "f":
        return int(np.float32(float(v)).view(np.uint32))
    if letter == "d":
        return int(np.float64(float(v)).view(np.uint64))
    if isinstance(v, (float, FloatValue)) and not isinstance(v, int):
        dt = getattr(v, "dtype", None)
        w = CONSTRAINT_BITS.get(letter, 32)
        if dt is not None and dt.width == 16:
            from ...dtypes import to_storage

            return int(np.asarray(to_storage(np.asarray(float(v)), dt)).view(np.uint16))
        return int(np.float32(float(v)).view(np.uint32)) if w == 32 else int(np.float64(float(v)).view(np.uint64))
    return int(v) & ((1 << CONSTRAINT_BITS.get(letter, 64)) - 1)


class InlineAsmOp(Op):
    """``asm volatile`` of inline PTX: dsts (one register per output), srcs (a reference or a
    static number per input), the program and its constraints."""

    __slots__ = ("dsts", "srcs", "asm", "constraints", "program")

    def __init__(self, dsts: List[Any], srcs: List[Tuple[Any, Any]], asm: str, constraints: List[str],
                 program: Program):
        self.dsts, self.srcs, self.asm, self.constraints, self.program = dsts, srcs, asm, constraints, program

    def __repr__(self) -> str:
        outs = ", ".join(d.name for d in self.dsts)
        return f"{outs} = asm({self.asm!r})"

    # -- CPU
    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        ins = []
        for ref, v in self.srcs:
            if ref is None:
                ins.append(np.full(b.n, v, np.uint64))
            else:
                ins.append(_bits_of_storage(b.column(ref, v, real=False)))
        nt = int(np.prod(b.ir.block))
        lanes = Lanes(np.arange(b.n, dtype=np.int64) % nt, tuple(b.ir.block))
        try:
            outs = self.program.run(ins, lanes)
        except PtxError as e:
            raise NotInterpreted(f"kernel {b.ir.name}: inline PTX at {getattr(self, 'loc', None) or '?'}: {e}",
                                 _instr(e)) from None
        for dst, bits in zip(self.dsts, outs):
            vals = _storage_of_bits(bits, dst.dtype)
            cur = b.regs.get(dst.id)
            if cur is None or mask is None:
                out = np.empty((b.n, 1), dtype=dst.dtype.storage) if cur is None else cur
                out[:, 0] = vals
                b.regs[dst.id] = out
            else:
                cur[mask, 0] = vals[mask]

    # -- CUDA
    def cuda(self, r: Any) -> None:
        for d in self.dsts:
            r.declare(d)
        nout = len(self.dsts)
        outs, ins, pre, post = [], [], [], []
        for k, (d, c) in enumerate(zip(self.dsts, self.constraints[:nout])):
            letter = c.lstrip("=+&")
            v = r.fresh("asm_o")
            pre.append(f"{_C_TYPE[letter]} {v};")
            outs.append(f'"={letter}"({v})')
            post.append(f"{r.reg(d)}[0] = {_from_c(v, letter, d.dtype, r)};")
        for j, ((ref, val), c) in enumerate(zip(self.srcs, self.constraints[nout:])):
            letter = c.lstrip("=+&")
            if letter.isdigit():  # tied to output k: the output variable starts with the value
                k = int(letter)
                ol = self.constraints[k].lstrip("=+&")
                v = outs[k].split("(")[1].rstrip(")")
                pre.append(f"{v} = {_to_c(ref, val, ol, r)};")
                outs[k] = outs[k].replace('"=', '"+', 1)
                ins.append(None)
                continue
            if letter in ("n", "i"):  # an immediate: the constant itself (LLVM's "i" is CUDA's "n")
                ins.append(f'"n"({int(val)}ULL)')
                continue
            v = r.fresh("asm_i")
            pre.append(f"{_C_TYPE[letter]} {v} = {_to_c(ref, val, letter, r)};")
            ins.append(f'"{letter}"({v})')
        # operand numbers: a tied input has none of its own in CUDA's asm (it is the "+" output)
        text = self.asm.replace("%", "%%")
        renum, nxt = {}, 0
        for k in range(nout):
            renum[k] = nxt
            nxt += 1
        for j, s in enumerate(ins):
            if s is None:
                renum[nout + j] = renum[int(self.constraints[nout + j].lstrip("=+&"))]
            else:
                renum[nout + j] = nxt
                nxt += 1
        import re

        text = re.sub(r"\$(\d+)", lambda m: f"%{renum.get(int(m.group(1)), int(m.group(1)))}", text)
        text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", " ")
        with r.braces():
            for line in pre:
                r.emit(line)
            r.emit(f'asm volatile("{text}" : {", ".join(outs)} : {", ".join(s for s in ins if s is not None)});')
            for line in post:
                r.emit(line)


def _to_c(ref: Any, val: Any, letter: str, r: Any) -> str:
    """C code of an input as the constraint's C type, bit for bit."""
    ct = _C_TYPE[letter]
    if ref is None:
        bits = int(val)
        if letter == "f":
            return f"__uint_as_float({bits & 0xFFFFFFFF}u)"
        if letter == "d":
            return f"__longlong_as_double({bits & 0xFFFFFFFFFFFFFFFF}ull)"
        return f"({ct}){bits}ull"
    dt = val
    s = r.stored(ref, dt)
    st = r.ctype(dt)[0]
    if letter == "f":
        return s if st == "float" else f"__uint_as_float((unsigned int)({s}))"
    if letter == "d":
        return s if st == "double" else f"__longlong_as_double((long long)({s}))"
    if st == "float":
        return f"({ct})__float_as_uint({s})"
    if st == "double":
        return f"({ct})__double_as_longlong({s})"
    if dt.kind == "int" and dt.width < CONSTRAINT_BITS[letter]:  # a narrower signed value: its bits
        return f"({ct})({_UNSIGNED[dt.width]})({s})"
    return f"({ct})({s})"


_UNSIGNED = {8: "unsigned char", 16: "unsigned short", 32: "unsigned int", 64: "unsigned long long"}


def _from_c(v: str, letter: str, dtype: Any, r: Any) -> str:
    st = r.ctype(dtype)[0]
    if letter == "f":
        return v if st == "float" else f"({st})__float_as_uint({v})"
    if letter == "d":
        return v if st == "double" else f"({st})__double_as_longlong({v})"
    if st == "float":
        return f"__uint_as_float((unsigned int)({v}))"
    if st == "double":
        return f"__longlong_as_double((long long)({v}))"
    return f"({st})({v})"


_THREAD_DEPENDENT = ("%tid", "%laneid", "%warpid", "%lanemask", "%ntid", "%nwarpid", "shfl", "redux", "vote",
                     "elect")


_ST_ASYNC_TYPES = {"f32": 32, "b32": 32, "s32": 32, "u32": 32, "f64": 64, "b64": 64, "s64": 64, "u64": 64}


_LANES = {"x": 0, "y": 1, "z": 2, "w": 3}


def _vector_operands(parts: List[str], where: str, what: str, head: str) -> str:
    """The last instruction of ``parts`` with its vector-register operands spelled as the inputs
    they were built from: quack's store_shared_remote_x4 declares ``.reg .v4 .s32 abcd;``, fills it
    with ``mov.s32 abcd.x, $2;`` ... ``abcd.w``, then stores ``abcd`` with one ``st.async...v4.s32``,
    which is ``{$2, $3, $4, $5}``. Any other program is refused naming its first instruction."""
    vecs: dict = {}
    refuse = NotInterpreted(f"{what} at {where}: a program of {len(parts)} instructions with shared-memory address "
                            f"operands; cutelab lowers one mapa or st.async instruction on addresses (after "
                            f"`.reg .vN .T name;` and `mov.T name.x, $k;` that build its vector operand)",
                            f"PTX program with addresses ({head})")
    for p in parts[:-1]:
        m = re.fullmatch(r"\.reg\s+\.v([24])\s+\.([bsuf](?:32|64))\s+([A-Za-z_]\w*)", p)
        if m is not None:
            vecs[m.group(3)] = (m.group(2), [None] * int(m.group(1)))
            continue
        m = re.fullmatch(r"mov\.([bsuf](?:32|64))\s+([A-Za-z_]\w*)\.([xyzw])\s*,\s*(\$\d+)", p)
        if m is None or m.group(2) not in vecs:
            raise refuse
        ty, lanes = vecs[m.group(2)]
        k = _LANES[m.group(3)]
        if int(m.group(1)[1:]) != int(ty[1:]) or k >= len(lanes):
            raise refuse
        lanes[k] = m.group(4)
    last = parts[-1]
    for name, (_, lanes) in vecs.items():
        if re.search(rf"\b{name}\b", last) is None:
            continue
        if any(x is None for x in lanes):
            raise TraceError(f"{what} at {where}: the vector register {name} is used before each of its "
                             f"{len(lanes)} lanes is set")
        last = re.sub(rf"\b{name}\b", "{" + ", ".join(lanes) + "}", last)
    return last


def asm_on_addresses(operands: List[Any], asm: str, constraints: str, where: str, what: str) -> Any:
    """Inline PTX with shared-memory address operands (``ptr.toint().ir_value()``,
    frontend.smem.SharedAddress), lowered to the IR's ops, since cutelab's memory has no machine
    addresses: one instruction, ``mapa.shared::cluster.{u32,b32} $0, addr, rank`` (the address in
    CTA rank's shared memory: map_dsmem_ptr) or ``st.async.shared::cluster.mbarrier::complete_tx
    ::bytes[.v2|.v4].<type> [addr], value(s), [mbar]`` (AsyncDsmemStoreOp). Anything else is refused
    naming the instruction and the program's line."""
    from ..frontend.smem import SharedAddress
    from .cluster import DsmemEngine, map_dsmem_ptr, st_async_lowered

    text = asm.strip().strip("{}").strip()
    parts = [x.strip() for x in text.split(";") if x.strip()]
    head = parts[0].split()[0] if parts else text
    if len(parts) > 1:
        parts = [_vector_operands(parts, where, what, head)]
    if len(parts) != 1:
        raise NotInterpreted(f"{what} at {where}: a program of {len(parts)} instructions with shared-memory address "
                             f"operands; cutelab lowers one mapa or st.async instruction on addresses",
                             f"PTX program with addresses ({head})")
    m = re.fullmatch(r"(\S+)\s+(.*)", parts[0], re.S)
    op, args = (m.group(1), m.group(2)) if m else (parts[0], "")
    cons = [c.strip() for c in constraints.split(",") if c.strip() and not c.strip().startswith("~")]
    nout = sum(1 for c in cons if c.startswith("="))

    def operand(tok: str) -> Any:
        tok = tok.strip()
        mm = re.fullmatch(r"\$(\d+)", tok)
        if mm is None:
            raise NotInterpreted(f"{what} at {where}: operand {tok!r} of {op} is not a $n operand", op)
        k = int(mm.group(1)) - nout
        if not 0 <= k < len(operands):
            raise TraceError(f"{what} at {where}: {tok} names no input of {op}")
        return operands[k]

    if op in ("mapa.shared::cluster.u32", "mapa.shared::cluster.b32"):
        toks = [x.strip() for x in args.split(",")]
        if len(toks) != 3 or toks[0] != "$0" or nout != 1:
            raise NotInterpreted(f"{what} at {where}: {op} takes `$0, $1, $2` (an output, an address, a CTA rank)", op)
        addr, rank = operand(toks[1]), operand(toks[2])
        if not isinstance(addr, SharedAddress) or isinstance(getattr(addr.ptr, "engine", None), DsmemEngine):
            raise TraceError(f"{what} at {where}: {op}: its address must be this CTA's shared-memory address "
                             f"(smem_ptr.toint().ir_value()), got {addr!r}")
        return SharedAddress(map_dsmem_ptr(addr.ptr, rank))
    m2 = re.fullmatch(r"st\.async\.shared::cluster\.mbarrier::complete_tx::bytes(\.v[24])?\.(\w+)", op)
    if m2 is not None:
        ty = m2.group(2)
        n = int(m2.group(1)[2:]) if m2.group(1) else 1
        mm = re.fullmatch(r"\[\s*(\$\d+)\s*\]\s*,\s*(\{[^}]*\}|\$\d+)\s*,\s*\[\s*(\$\d+)\s*\]", args.strip())
        if ty not in _ST_ASYNC_TYPES or mm is None or nout:
            raise NotInterpreted(f"{what} at {where}: {op} {args.strip()} is not a form cutelab lowers "
                                 f"([addr], value or {{values}}, [mbar]; .f32/.b32/.s32/.u32/.f64/.b64/.s64/.u64)", op)
        dst, mbar = operand(mm.group(1)), operand(mm.group(3))
        vals = [operand(x) for x in mm.group(2).strip("{}").split(",")]
        for name, a in (("destination", dst), ("mbarrier", mbar)):
            if not (isinstance(a, SharedAddress) and isinstance(getattr(a.ptr, "engine", None), DsmemEngine)):
                raise TraceError(f"{what} at {where}: {op}: the {name} must be a shared::cluster address (the result "
                                 f"of mapa), got {a!r}")
        return st_async_lowered(dst.ptr, vals, mbar.ptr, n, _ST_ASYNC_TYPES[ty], op, where)
    if op == "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32":  # quack's cpasync_reduce_bulk_add_f32
        from ...address import PointerInt, pointer_from_int
        from ...tensor import Pointer
        from .bulk_copy import bulk_reduce_add

        mm = re.fullmatch(r"\[\s*(\$\d+)\s*\]\s*,\s*\[\s*(\$\d+)\s*\]\s*,\s*(\$\d+)", args.strip())
        if mm is None or nout:
            raise NotInterpreted(f"{what} at {where}: {op} {args.strip()} is not a form cutelab lowers "
                                 f"([global address], [shared address], bytes)", op)
        g, sa, n = operand(mm.group(1)), operand(mm.group(2)), operand(mm.group(3))
        if isinstance(g, PointerInt) and str(g.ptr.memspace) in ("gmem", "generic"):
            g = pointer_from_int(g.ptr.engine.dtype, g, "gmem", None)
        if not isinstance(g, Pointer):
            raise TraceError(f"{what} at {where}: {op}: the global address must be a global-memory pointer "
                             f"(gmem_ptr.llvm_ptr), got {g!r}")
        if not isinstance(sa, SharedAddress) or isinstance(getattr(sa.ptr, "engine", None), DsmemEngine):
            raise TraceError(f"{what} at {where}: {op}: the shared address must be this CTA's shared-memory address "
                             f"(smem_ptr.toint()), got {sa!r}")
        nb = n if isinstance(n, (int, np.integer)) else getattr(n, "value", n)
        bulk_reduce_add(g, sa.ptr, nb, f"{what} at {where}: {op}")
        return None
    raise NotInterpreted(f"{what} at {where}: PTX instruction '{op}' with shared-memory address operands is not "
                         f"lowered (cutelab lowers mapa.shared::cluster, st.async...complete_tx::bytes and "
                         f"cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32)", op)


def inline_asm(res: Any, operands: Sequence[Any], asm: str, constraints: str, where: str,
               what: str = "llvm.inline_asm") -> Any:
    """Trace inline PTX (see the module docstring); outside a kernel, or with static operands,
    run it now."""
    from ...numeric import Int32, Int64
    from ..frontend.trace import TraceValue, current, tracing
    from ..ir.symbolic import is_sym

    from ..frontend.smem import SharedAddress
    from ...address import PointerInt

    # a shared-memory address passed as an integer (Int32(smem_ptr.toint()), as quack's set_block_rank
    # makes one): the operand is its address, as ptr.toint().ir_value() gives it (CuTe DSL passes ir_value())
    operands = [x.ir_value() if isinstance(x, PointerInt) and hasattr(x.ptr.engine, "address_value") else x
                for x in operands]
    from .ptx_umma import asm_umma, lowers

    if lowers(asm, list(operands), constraints):  # UMMAs through hand-built descriptors, function-scope registers
        return asm_umma(list(operands), asm, constraints, where, what)
    if any(isinstance(x, SharedAddress) for x in operands):  # shared-memory addresses: lowered to the IR's ops
        return asm_on_addresses(list(operands), asm, constraints, where, what)
    if any(isinstance(x, PointerInt) for x in operands):  # a kernel argument's address: ld/st/atom/red ops
        from .atomics import asm_on_global

        return asm_on_global(list(operands), asm, constraints, where, what)
    bar = _block_barrier(asm, operands, constraints)
    if bar is not None:  # `bar.sync 0;` alone: the kernel IR's block barrier (__syncthreads)
        from ..frontend.threads import sync_threads

        if bar:
            raise NotInterpreted(f"{what} at {where}: {bar}", bar.split(" with ")[0])
        sync_threads()
        return None
    try:
        prog = parse(asm, constraints)
    except PtxError as e:
        raise NotInterpreted(f"{what} at {where}: {e}; cutelab interprets the instructions instr/ptx.py lists",
                             _instr(e)) from None
    cons = prog.outs + prog.ins
    nout = len(prog.outs)
    if len(operands) != len(prog.ins):
        raise TraceError(f"{what} at {where}: the constraints {constraints!r} name {len(prog.ins)} inputs, "
                         f"but {len(operands)} operands are given")
    if any(c.startswith("+") for c in prog.outs):
        raise NotInterpreted(f"{what} at {where}: read-write outputs ('+' constraints) are not interpreted; "
                             f"use a tied input (\"0\")")
    res_types = _result_types(res, prog, where, what)
    ops = [x.ir_value() if hasattr(x, "ir_value") and not isinstance(x, TraceValue) else x for x in operands]
    dynamic = any(isinstance(x, TraceValue) or is_sym(x) for x in ops)
    thread = any(s in asm for s in _THREAD_DEPENDENT)
    if not dynamic and not (thread and tracing()):
        if thread:
            raise TraceError(f"{what} at {where}: the program reads thread registers or runs warp instructions; "
                             f"it runs inside a kernel")
        ins = [np.array([_static_bits(v, c.lstrip('=+&') if not c.isdigit() else prog.outs[int(c)].lstrip('=+&'))],
                        np.uint64) for v, c in zip(ops, prog.ins)]
        try:
            outs = prog.run(ins, Lanes(np.zeros(1, np.int64), (1, 1, 1)))
        except PtxError as e:
            raise NotInterpreted(f"{what} at {where}: {e}", _instr(e)) from None
        vals = [_python_value(o[0], dt) for o, dt in zip(outs, res_types)]
        return None if nout == 0 else vals[0] if nout == 1 else tuple(vals)
    t = current(what)
    srcs: List[Tuple[Any, Any]] = []
    for x, c in zip(ops, prog.ins):
        letter = c if not c.isdigit() else prog.outs[int(c)].lstrip("=+&")
        if letter in ("n", "i") and not isinstance(x, (int, np.integer)):
            raise TraceError(f"kernel {t.name}: {what} at {where}: operand {x!r} has the immediate constraint "
                             f"{c!r}, so it must be a constant known at compile time")
        if isinstance(x, TraceValue):
            if len(x.refs) != 1:
                raise TraceError(f"kernel {t.name}: {what} at {where}: an operand must be one scalar, got a tensor "
                                 f"value of shape {x.shape}")
            t.check_refs(x.refs, what)
            srcs.append((x.refs[0], x.dtype))
        elif is_sym(x):  # an index expression (thread_idx, a loop variable): an Int32 (Int64 for "l")
            t.check_refs([x], what)
            srcs.append((x, Int64 if letter == "l" else Int32))
        elif isinstance(x, (int, float)):
            srcs.append((None, _static_bits(x, letter)))
        else:
            raise TraceError(f"kernel {t.name}: {what} at {where}: operand {x!r} ({type(x).__name__}) is not a number "
                             f"or a runtime scalar")
    dsts = [t.new_reg(dt, 1) for dt in res_types]
    t.emit(InlineAsmOp(dsts, srcs, asm, cons, prog))
    vals = [TraceValue([(d, 0)], (), d.dtype) for d in dsts]
    return None if nout == 0 else vals[0] if nout == 1 else tuple(vals)


def _block_barrier(asm: str, operands: Sequence[Any], constraints: str) -> Optional[str]:
    """For a program that is one ``bar.sync`` / ``barrier.sync`` (``.aligned``) instruction: ""
    when it is the whole block's barrier 0 (the IR's Barrier), else why it is not interpreted;
    None for any other program."""
    import re

    text = asm.strip().strip("{}").strip().rstrip(";").strip()
    m = re.fullmatch(r"(bar|barrier)(\.cta)?\.(sync|arrive|red\S*)(\.aligned)?\s+(.*)", text, re.S)
    if m is None:
        return None
    args = [a.strip() for a in m.group(5).split(",")]
    if m.group(3) == "sync" and args == ["0"] and not operands and not constraints.strip("~{memory} ,"):
        return ""
    return (f"PTX instruction '{text.split()[0]}' with operands {args} (named barriers and thread counts are not "
            f"interpreted; `bar.sync 0;` is the block's barrier)")


def _python_value(bits: Any, dt: Any) -> Any:
    v = _storage_of_bits(np.array([bits], np.uint64), dt)[0]
    from ...dtypes import to_compute

    x = to_compute(np.asarray([v]), dt)[0]
    return float(x) if dt.is_float else int(x)


def _result_types(res: Any, prog: Program, where: str, what: str) -> List[Any]:
    """The cutlass type of each output: res (one type, or a struct/tuple of them) where given,
    else from the constraint letter."""
    from ...numeric import is_numeric_type

    letters = [c.lstrip("=+&") for c in prog.outs]
    if isinstance(res, (tuple, list)):
        given = list(res)
    elif isinstance(res, dict) and "struct" in res:
        given = list(res["struct"])
    elif res is None:
        given = [None] * len(letters)
    else:
        given = [res] * len(letters) if len(letters) == 1 else [None] * len(letters)
    if len(given) != len(letters):
        raise TraceError(f"{what} at {where}: the result type names {len(given)} values, the constraints "
                         f"{len(letters)} outputs")
    out = []
    for g, letter in zip(given, letters):
        if letter not in ("r", "l", "f", "d", "h", "c"):
            raise NotInterpreted(f"{what} at {where}: output constraint '={letter}' is not interpreted")
        if is_numeric_type(g):
            if g.width != CONSTRAINT_BITS[letter] and not (g.width == 1 and letter == "r"):
                if not (g.width < CONSTRAINT_BITS[letter] and g.is_integer):
                    raise TraceError(f"{what} at {where}: result type {g} does not fit the output constraint "
                                     f"'={letter}' ({CONSTRAINT_BITS[letter]} bits)")
            out.append(g)
        else:
            out.append(_default_dtype(letter))
    return out


def _letter(x: Any) -> str:
    """The constraint letter of a value or a type (cute.arch.inline_ptx picks registers by size)."""
    from ...numeric import is_numeric_type

    from ..ir.symbolic import is_sym

    if is_sym(x):  # an index expression: an Int32
        return "r"
    dt = x if is_numeric_type(x) else getattr(x, "dtype", None)
    if dt is None:
        if isinstance(x, float):
            return "f"
        return "r" if -(1 << 31) <= int(x) < (1 << 32) else "l"
    if dt.is_float and dt.width == 32:
        return "f"
    if dt.is_float and dt.width == 64:
        return "d"
    return {64: "l", 16: "h", 8: "r", 1: "r"}.get(dt.width, "r")


def inline_ptx(ptx_code: str, *, write_only_types: Optional[Sequence[Any]] = None,
               read_only_args: Optional[Sequence[Any]] = None, read_write_args: Optional[Sequence[Any]] = None,
               predicate: Any = None, where: str = "", loc: Any = None, ip: Any = None) -> Any:
    """``cute.arch.inline_ptx``: PTX with named operands ``{$w0}`` (outputs of write_only_types),
    ``{$rw0}`` (read_write_args, read and written), ``{$r0}`` (read_only_args), as inline_asm
    with positional ones. Returns None, the one output, or a tuple (write-only outputs, then
    read-write ones). ``predicate`` (a static bool) runs it or not."""
    import re

    w = list(write_only_types or ())
    rw = list(read_write_args or ())
    r = list(read_only_args or ())
    if predicate is not None:
        from ..ir.symbolic import is_sym
        from ..frontend.trace import TraceValue

        if isinstance(predicate, TraceValue) or is_sym(predicate):
            raise NotInterpreted(f"cute.arch.inline_ptx at {where}: a runtime predicate is not interpreted; "
                                 f"put the call in an `if`", "cute.arch.inline_ptx(predicate=...)")
        if not predicate:
            return None
    n_w, n_rw = len(w), len(rw)
    pos = {}
    for k in range(n_w):
        pos[f"w{k}"] = k
    for k in range(n_rw):
        pos[f"rw{k}"] = n_w + k
    for k in range(len(r)):
        pos[f"r{k}"] = n_w + n_rw + k  # read-only inputs after the outputs
    for k in range(n_rw):  # the read-write values as inputs tied to their outputs (no name of their own)
        pos[f"_tie{k}"] = n_w + n_rw + len(r) + k

    def sub(m: Any) -> str:
        key = m.group(1)
        if key not in pos:
            raise TraceError(f"cute.arch.inline_ptx at {where}: {{${key}}} names no operand ({n_w} write-only, "
                             f"{n_rw} read-write, {len(r)} read-only)")
        return f"${pos[key]}"

    asm = re.sub(r"\{\$(rw\d+|w\d+|r\d+)\}", sub, ptx_code)
    cons = [f"={_letter(t)}" for t in w] + [f"={_letter(v)}" for v in rw] + [_letter(v) for v in r] + \
        [str(n_w + k) for k in range(n_rw)]
    res = list(w) + [getattr(v, "dtype", None) or _default_dtype(_letter(v)) for v in rw]
    return inline_asm(res if len(res) != 1 else res[0], list(r) + list(rw), asm, ",".join(cons), where,
                      what="cute.arch.inline_ptx")
