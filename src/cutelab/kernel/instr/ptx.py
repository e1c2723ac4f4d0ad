"""A PTX interpreter for the inline assembly of kernels (``llvm.inline_asm``), on the CPU.

``parse(asm, constraints)`` reads the assembly text as CUDA's ``asm()`` sees it: operands
``$0, $1, ...`` (outputs first, then inputs, as the constraints list them; an input constraint
``"0"`` is tied to output 0), ``{ }`` scopes, ``.reg .TYPE a, b<4>;`` declarations, predicates
``@p`` / ``@!p``, vector operands ``{a, b}``, immediates (``12``, ``-3``, ``0x1F``,
``0f3F800000``). ``Program.run(inputs, lanes)`` executes it for every thread at once: each
register holds a numpy ``uint64`` array of raw bits, one per thread.

Instructions: ``add sub mul mad fma`` (``.f32``, packed ``.f32x2`` / ``.f16x2`` / ``.bf16x2``,
``.rn/.rz`` ``.ftz`` ``.sat``, integer ``.s32 .u32 .s64 .u64 .s16 .u16`` with ``.lo/.hi/.wide``),
``min max`` (floats, integers, packed halves), ``neg abs``, ``ex2 lg2 rcp rsqrt sqrt tanh sin
cos`` ``.approx``, ``cvt`` (``.rn .rz .rni .rzi .rmi .rpi .sat .satfinite``; f16/bf16/f32/f64
and integers, packed ``.f16x2/.bf16x2.f32``), ``mov`` (copies, special registers ``%tid``,
``%ntid``, ``%laneid``, ``%warpid``; pack and unpack with vector operands), ``and or xor not
shl shr lop3 prmt``, ``setp`` (all comparisons, ``p|q`` for packed halves, a combining
predicate), ``selp``, ``shfl.sync`` (up/down/bfly/idx with the clamp and segment mask) and
``redux.sync`` (add/min/max/and/or/xor; f32 min/max with ``.abs``/``.NaN``), ``vote.sync``
(all/any/uni/ballot) and ``elect.sync``. Floating point: computed in float64 and rounded once
to the destination (exact for add, sub, mul; an fma may differ from the hardware's single
rounding in its last bit in rare double-rounding cases); ``.approx`` functions are exact here,
within the hardware's stated error.

Anything else (memory instructions, barriers, branches, the fp4/fp6/fp8 conversions, ...) is
a PtxError naming the instruction: the caller adds the user's line.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ...errors import TraceError

__all__ = ["PtxError", "Program", "parse", "CONSTRAINT_BITS"]

U64 = np.uint64
CONSTRAINT_BITS = {"r": 32, "l": 64, "f": 32, "d": 64, "h": 16, "c": 16, "n": 64, "i": 64, "b": 1}


class PtxError(ValueError):
    """An instruction (or form of one) the interpreter does not run, or malformed assembly."""


class NotInterpreted(TraceError, NotImplementedError):
    """Inline assembly with an instruction (or form) cutelab does not run: names it and the user's line.
    ``instr``: what is not interpreted (e.g. "PTX instruction 'mapa.shared::cluster.u32'")."""

    def __init__(self, msg: str, instr: str = ""):
        super().__init__(msg)
        self.instr = instr or msg


_M = {w: (1 << w) - 1 for w in (1, 8, 16, 32, 64)}


def _mask(w: int) -> U64:
    return U64((1 << w) - 1) if w < 64 else U64(0xFFFFFFFFFFFFFFFF)


# --------------------------------------------------------------------------- parsing

class Operand:
    __slots__ = ("kind", "name", "value", "items", "offset", "pair")

    def __init__(self, kind: str, name: str = "", value: int = 0, items: Tuple["Operand", ...] = (),
                 offset: int = 0, pair: Optional[str] = None):
        self.kind, self.name, self.value, self.items, self.offset, self.pair = kind, name, value, items, offset, pair

    def __repr__(self) -> str:
        if self.kind == "imm":
            return str(self.value)
        if self.kind == "vec":
            return "{" + ", ".join(map(repr, self.items)) + "}"
        return self.name + (f"|{self.pair}" if self.pair else "")


class Inst:
    __slots__ = ("text", "pred", "neg", "opcode", "mods", "ops")

    def __init__(self, text: str, pred: Optional[str], neg: bool, opcode: str, ops: List[Operand]):
        self.text, self.pred, self.neg, self.ops = text, pred, neg, ops
        parts = opcode.split(".")
        self.opcode, self.mods = parts[0], parts[1:]

    def __repr__(self) -> str:
        return self.text


def _split_top(s: str) -> List[str]:
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


_IMM = re.compile(r"[-+]?(0[xX][0-9a-fA-F]+|0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|\d+)[uU]?")


def _operand(tok: str, text: str) -> Operand:
    tok = tok.strip()
    if tok.startswith("{") and tok.endswith("}"):
        return Operand("vec", items=tuple(_operand(t, text) for t in _split_top(tok[1:-1])))
    if tok.startswith("["):
        raise PtxError(f"memory operand {tok} in {text!r}")
    if "|" in tok:
        a, b = tok.split("|", 1)
        return Operand("reg", a.strip(), pair=b.strip())
    if _IMM.fullmatch(tok):
        neg = tok.startswith("-")
        t = tok.lstrip("+-").rstrip("uU")
        if t[:2] in ("0x", "0X"):
            v = int(t, 16)
        elif t[:2] in ("0f", "0F", "0d", "0D"):
            v = int(t[2:], 16)
        else:
            v = int(t)
        return Operand("imm", value=-v if neg else v)
    if re.fullmatch(r"[-+]?\d+\.\d*([eE][-+]?\d+)?", tok):
        return Operand("fimm", value=float(tok))  # type: ignore[arg-type]
    if re.fullmatch(r"[%$]?[A-Za-z_$][\w$.]*", tok):
        return Operand("reg", tok)
    raise PtxError(f"operand {tok!r} in {text!r}")


def _statements(asm: str) -> List[str]:
    """Statements of the assembly, scope braces dropped (a brace inside a statement is a vector)."""
    asm = re.sub(r"//[^\n]*", "", asm)
    asm = re.sub(r"/\*.*?\*/", "", asm, flags=re.S)
    out: List[str] = []
    i, n = 0, len(asm)
    while i < n:
        ch = asm[i]
        if ch.isspace() or ch in "{};":
            i += 1
            continue
        j = asm.find(";", i)
        if j < 0:
            j = n
        out.append(asm[i:j].strip())
        i = j + 1
    return [s for s in out if s]


class Program:
    """Parsed inline assembly: its instructions, declared registers and operand bindings."""

    def __init__(self, asm: str, constraints: Sequence[str]):
        self.asm = asm
        self.outs = [c for c in constraints if c.startswith("=") or c.startswith("+")]
        self.ins = [c for c in constraints if not (c.startswith("=") or c.startswith("+"))]
        for c in constraints:
            letter = c.lstrip("=+&")
            if not (letter in CONSTRAINT_BITS or letter.isdigit()):
                raise PtxError(f"constraint {c!r} of llvm.inline_asm (known: r l f d h n i, and a digit for a tied input)")
        self.decl: Dict[str, int] = {}  # declared register -> bits (1: predicate)
        self.code: List[Inst] = []
        for st in _statements(asm):
            if st.startswith(".reg"):
                m = re.fullmatch(r"\.reg\s+\.(\w+)\s+(.*)", st, re.S)
                if m is None:
                    raise PtxError(f"declaration {st!r}")
                w = _type_bits(m.group(1))
                for name in _split_top(m.group(2)):
                    mm = re.fullmatch(r"([%\w$]+)\s*<\s*(\d+)\s*>", name)
                    if mm:
                        for k in range(int(mm.group(2))):
                            self.decl[f"{mm.group(1)}{k}"] = w
                    else:
                        self.decl[name.strip()] = w
                continue
            if re.match(r"^[\w$]+:", st):
                raise PtxError(f"label {st.split(':')[0]!r} (branches are not interpreted)")
            m = re.fullmatch(r"(@!?[%\w$]+\s+)?([a-z][\w.:]*)\s*(.*)", st, re.S)
            if m is None:
                raise PtxError(f"statement {st!r}")
            pred, neg = None, False
            if m.group(1):
                p = m.group(1).strip()[1:]
                neg = p.startswith("!")
                pred = p.lstrip("!")
            ops = [_operand(t, st) for t in _split_top(m.group(3))] if m.group(3).strip() else []
            self.code.append(Inst(st, pred, neg, m.group(2), ops))
        for inst in self.code:
            if inst.opcode not in _OPS:
                raise PtxError(f"PTX instruction {inst.opcode + ''.join('.' + x for x in inst.mods)!r}")

    # -- running
    def run(self, inputs: Sequence[np.ndarray], lanes: "Lanes") -> List[np.ndarray]:
        """The outputs' bits (uint64 arrays) for the inputs' bits, every thread at once."""
        n = lanes.n
        env: Dict[str, np.ndarray] = {}
        alias: Dict[str, str] = {}
        nout = len(self.outs)
        for k in range(nout):
            env[f"${k}"] = np.zeros(n, U64)
        for j, c in enumerate(self.ins):
            name = f"${nout + j}"
            letter = c.lstrip("=+&")
            v = np.broadcast_to(np.asarray(inputs[j], dtype=U64), (n,)).copy()
            if letter.isdigit():  # tied to an output: the output starts with this value
                env[f"${int(letter)}"] = v
                alias[name] = f"${int(letter)}"
            else:
                env[name] = v
        for k, c in enumerate(self.outs):
            if c.startswith("+"):
                env[f"${k}"] = np.broadcast_to(np.asarray(inputs[len(self.ins) + k], dtype=U64), (n,)).copy()
        for name in self.decl:
            env[name] = np.zeros(n, U64)
        m = Machine(env, alias, lanes, self.decl)
        for inst in self.code:
            mask = None
            if inst.pred is not None:
                mask = m.read(Operand("reg", inst.pred), 1) != 0
                if inst.neg:
                    mask = ~mask
            m.mask = mask
            try:
                _OPS[inst.opcode](m, inst)
            except PtxError as e:
                raise PtxError(f"{e} (in {inst.text!r})") from None
        return [env[f"${k}"] for k in range(nout)]


def parse(asm: str, constraints: str) -> Program:
    cs = [c.strip() for c in constraints.split(",") if c.strip() and not c.strip().startswith("~")]
    return Program(asm, cs)


def _type_bits(t: str) -> int:
    if t == "pred":
        return 1
    m = re.search(r"(\d+)", t)
    if m is None:
        raise PtxError(f"type .{t}")
    w = int(m.group(1))
    if "x2" in t:
        return w * 2
    if "x4" in t:
        return w * 4
    return w


class Lanes:
    """Where each thread of the interpreter's batch is: its thread index in the block (x, y, z),
    the block size, its lane and warp; rows of the same warp share a ``warp_key``."""

    def __init__(self, tid: np.ndarray, block: Tuple[int, int, int]):
        self.n = len(tid)
        self.tid = tid.astype(np.int64)  # linear thread index in its block
        self.block = block
        self.nt = block[0] * block[1] * block[2]
        self.lane = self.tid % 32
        self.row = np.arange(self.n, dtype=np.int64)
        self.warp_start = self.row - self.lane  # the row of lane 0 of each thread's warp


# --------------------------------------------------------------------------- the machine

class Machine:
    def __init__(self, env: Dict[str, np.ndarray], alias: Dict[str, str], lanes: Lanes, decl: Dict[str, int]):
        self.env, self.alias, self.lanes, self.decl = env, alias, lanes, decl
        self.mask: Optional[np.ndarray] = None

    def _name(self, name: str) -> str:
        return self.alias.get(name, name)

    def read(self, op: Operand, bits: int) -> np.ndarray:
        n = self.lanes.n
        if op.kind == "imm":
            return np.full(n, U64(op.value & _M[64]) & _mask(bits), U64)
        if op.kind == "fimm":
            f = np.float32(op.value) if bits == 32 else np.float64(op.value)
            b = f.view(np.uint32 if bits == 32 else np.uint64)
            return np.full(n, U64(int(b)), U64)
        if op.kind == "vec":
            k = len(op.items)
            w = bits // k
            out = np.zeros(n, U64)
            for i, it in enumerate(op.items):
                out |= (self.read(it, w) & _mask(w)) << U64(i * w)
            return out
        name = self._name(op.name)
        if name in self.env:
            return self.env[name] & _mask(bits)
        if name.startswith("%"):
            return self._special(name) & _mask(bits)
        raise PtxError(f"register {op.name!r} is not declared")

    def _special(self, name: str) -> np.ndarray:
        L = self.lanes
        bx, by, _ = L.block
        t = L.tid
        table = {"%tid.x": t % bx, "%tid.y": (t // bx) % by, "%tid.z": t // (bx * by),
                 "%ntid.x": np.full(L.n, bx), "%ntid.y": np.full(L.n, by), "%ntid.z": np.full(L.n, L.block[2]),
                 "%laneid": L.lane, "%warpid": t // 32, "%nwarpid": np.full(L.n, (L.nt + 31) // 32),
                 "%lanemask_eq": np.left_shift(1, L.lane), "%lanemask_lt": np.left_shift(1, L.lane) - 1,
                 "%lanemask_le": np.left_shift(2, L.lane) - 1}
        v = table.get(name)
        if v is None:
            raise PtxError(f"special register {name}")
        return np.asarray(v, dtype=np.int64).astype(U64)

    def write(self, op: Operand, v: np.ndarray, bits: int) -> None:
        if op.kind == "vec":
            k = len(op.items)
            w = bits // k
            for i, it in enumerate(op.items):
                self.write(it, (v >> U64(i * w)) & _mask(w), w)
            return
        if op.kind != "reg" or op.name.startswith("%") and self._name(op.name) not in self.env:
            raise PtxError(f"cannot write to {op!r}")
        name = self._name(op.name)
        if name not in self.env:
            raise PtxError(f"register {op.name!r} is not declared")
        v = np.asarray(v, dtype=U64) & _mask(bits)
        if self.mask is None:
            self.env[name] = v.copy()
        else:
            self.env[name] = np.where(self.mask, v, self.env[name])


# --------------------------------------------------------------------------- values

def _f32(u: np.ndarray) -> np.ndarray:
    return (u & U64(0xFFFFFFFF)).astype(np.uint32).view(np.float32).astype(np.float64)


def _f64(u: np.ndarray) -> np.ndarray:
    return u.view(np.float64).copy()


def _f16(u: np.ndarray) -> np.ndarray:
    return (u & U64(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)


def _bf16(u: np.ndarray) -> np.ndarray:
    return ((u & U64(0xFFFF)).astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)


def _round_f32(x: np.ndarray, mode: str = "rn", ftz: bool = False, sat: bool = False,
               satfinite: bool = False) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        r = x.astype(np.float32)
        if mode in ("rz", "rm", "rp"):
            r = _directed(x, r, mode, np.float32)
        if sat:
            r = np.where(np.isnan(r), np.float32(0), np.clip(r, 0, 1)).astype(np.float32)
        if satfinite:
            big = np.finfo(np.float32).max
            r = np.where(np.isnan(r), r, np.clip(r, -big, big)).astype(np.float32)
        if ftz:
            r = np.where(np.abs(r) < np.finfo(np.float32).tiny, np.copysign(np.float32(0), r), r).astype(np.float32)
    return r.view(np.uint32).astype(U64)


def _directed(x: np.ndarray, near: np.ndarray, mode: str, dt: Any) -> np.ndarray:
    """near (x rounded to nearest in dt) moved to x rounded toward zero (rz), -inf (rm) or +inf (rp)."""
    with np.errstate(over="ignore", invalid="ignore"):
        r = near
        rx = r.astype(np.float64)
        fin = np.isfinite(x)
        if mode == "rz":
            away = fin & (np.abs(rx) > np.abs(x))
            r = np.where(away, np.nextafter(r, dt(0)), r)
            big = np.finfo(dt).max
            r = np.where(fin & np.isinf(r), np.copysign(dt(big), r), r)
        elif mode == "rm":
            r = np.where(fin & (rx > x), np.nextafter(r, dt(-np.inf)), r)
        else:
            r = np.where(fin & (rx < x), np.nextafter(r, dt(np.inf)), r)
    return r.astype(dt)


def _to_half(x: np.ndarray, kind: str, mode: str = "rn", sat: bool = False, relu: bool = False) -> np.ndarray:
    """Bits of x (float64) as f16 or bf16, rounded by mode; satfinite clamps to the largest finite."""
    with np.errstate(over="ignore", invalid="ignore"):
        if relu:
            x = np.where(np.isnan(x), x, np.maximum(x, 0))
        if kind == "f16":
            r = x.astype(np.float16)
            if mode in ("rz", "rm", "rp"):
                r = _directed(x, r, mode, np.float16)
            if sat:
                big = float(np.finfo(np.float16).max)
                r = np.where(np.isnan(r), r, np.clip(r, -big, big)).astype(np.float16)
            return r.view(np.uint16).astype(U64)
        f = x.astype(np.float32)  # bf16: from f32 bits (x came from at most f32 here, or f64 first rounded)
        if mode in ("rz", "rm", "rp"):
            f = _directed(x, f, mode, np.float32)
        u = f.view(np.uint32).astype(np.uint64)
        nan = np.isnan(f)
        if mode == "rn":
            lsb = (u >> U64(16)) & U64(1)
            u = u + U64(0x7FFF) + lsb
            out = u >> U64(16)
        else:
            top = u >> U64(16)
            rest = u & U64(0xFFFF)
            neg = (u >> U64(31)) & U64(1)
            if mode == "rz":
                out = top
            elif mode == "rm":
                out = np.where((rest != 0) & (neg == 1), top + U64(1), top)
            else:
                out = np.where((rest != 0) & (neg == 0), top + U64(1), top)
        out = np.where(nan, U64(0x7FFF), out & U64(0xFFFF))
        if sat:
            isinf = (out & U64(0x7FFF)) == U64(0x7F80)
            out = np.where(isinf & ~np.isinf(f), (out & U64(0x8000)) | U64(0x7F7F), out)
        return out.astype(U64)


def _fcode(t: str) -> Tuple[Callable[[np.ndarray], np.ndarray], int]:
    return {"f32": (_f32, 32), "f64": (_f64, 64), "f16": (_f16, 16), "bf16": (_bf16, 16)}[t]


def _signed(u: np.ndarray, w: int) -> np.ndarray:
    v = (u & _mask(w)).astype(np.int64) if w < 64 else u.view(np.int64).copy()
    if w < 64:
        v = np.where(v >= (1 << (w - 1)), v - (1 << w), v)
    return v


def _ty(inst: Inst) -> str:
    for m in reversed(inst.mods):
        if re.fullmatch(r"(b|s|u|f|bf)\d+(x\d)?|pred|e\dm\dx\d|ue8m0x2|s2f6x2|e2m1x2|e2m1x4|e4m3x2|e5m2x2", m):
            return m
    raise PtxError(f"PTX instruction {inst.opcode}.{'.'.join(inst.mods)} without a type")


def _type_of(t: str) -> Tuple[str, int, int]:
    """(kind, element bits, lanes) of a PTX type: kind f (float), s, u, b, pred."""
    if t == "pred":
        return "pred", 1, 1
    m = re.fullmatch(r"(bf|b|s|u|f)(\d+)(?:x(\d))?", t)
    if m is None:
        raise PtxError(f"type .{t}")
    kind = m.group(1)
    if kind == "bf":
        return "bf", 16, int(m.group(3) or 1)
    return kind, int(m.group(2)), int(m.group(3) or 1)


def _lanes_apply(m: Machine, inst: Inst, t: str, nargs: int,
                 ffun: Callable[..., np.ndarray], ifun: Optional[Callable[..., np.ndarray]] = None) -> None:
    """d = f(a, b, ...) elementwise over the lanes of a (packed) type; floats rounded by the modifiers."""
    kind, w, k = _type_of(t)
    total = w * k
    srcs = [m.read(o, total) for o in inst.ops[1:1 + nargs]]
    out = np.zeros(m.lanes.n, U64)
    mods = set(inst.mods)
    mode = next((x for x in ("rn", "rz", "rm", "rp") if x in mods), "rn")
    for lane in range(k):
        parts = [(s >> U64(lane * w)) & _mask(w) for s in srcs]
        if kind in ("f", "bf"):
            name = "bf16" if kind == "bf" else f"f{w}"
            dec, _ = _fcode(name)
            vals = [dec(p) for p in parts]
            with np.errstate(all="ignore"):
                r = ffun(*vals)
            if name == "f32":
                bits = _round_f32(r, mode, "ftz" in mods, "sat" in mods)
            elif name == "f64":
                bits = np.asarray(r, np.float64).view(np.uint64)
            else:
                if "sat" in mods:
                    r = np.where(np.isnan(r), 0.0, np.clip(r, 0, 1))
                bits = _to_half(np.asarray(r, np.float64), name, mode, relu="relu" in mods)
        else:
            if ifun is None:
                raise PtxError(f"PTX instruction {inst.opcode}.{'.'.join(inst.mods)}")
            vals = [_signed(p, w) if kind == "s" else p.astype(np.uint64) for p in parts]
            bits = np.asarray(ifun(*vals, w=w, kind=kind))
            bits = (bits.astype(np.int64).astype(U64) if bits.dtype.kind == "i" else bits.astype(U64)) & _mask(w)
        out |= (bits & _mask(w)) << U64(lane * w)
    m.write(inst.ops[0], out, total)


# --------------------------------------------------------------------------- instructions

def _int_arith(op: str, inst: Inst) -> Callable[..., np.ndarray]:
    mods = set(inst.mods)

    def f(*v: np.ndarray, w: int, kind: str) -> np.ndarray:
        a = [x.astype(object) if w == 64 else x.astype(np.int64) for x in v]
        if op == "add":
            r = a[0] + a[1]
        elif op == "sub":
            r = a[0] - a[1]
        elif op == "mul" or op == "mad":
            p = a[0] * a[1]
            if "hi" in mods:
                p = (np.asarray(p, dtype=object) >> w)
            r = p + a[2] if op == "mad" else p
        elif op == "min":
            r = np.minimum(a[0], a[1])
        elif op == "max":
            r = np.maximum(a[0], a[1])
        elif op == "neg":
            r = -a[0]
        elif op == "abs":
            r = np.abs(a[0])
        else:  # pragma: no cover - the table below lists the ops
            raise PtxError(op)
        if "sat" in mods and kind == "s":
            r = np.clip(r, -(1 << (w - 1)), (1 << (w - 1)) - 1)
        r = np.asarray(r, dtype=object) & ((1 << w) - 1)
        return np.asarray([int(x) for x in np.ravel(r)], dtype=np.uint64).reshape(np.shape(r))

    return f


def _arith(m: Machine, inst: Inst) -> None:
    op = inst.opcode
    t = _ty(inst)
    mods = set(inst.mods)
    kind, w, k = _type_of(t)
    if "wide" in mods and op in ("mul", "mad"):  # 32 x 32 -> 64 (16 x 16 -> 32)
        a = m.read(inst.ops[1], w)
        b = m.read(inst.ops[2], w)
        av = _signed(a, w) if kind == "s" else a.astype(np.int64)
        bv = _signed(b, w) if kind == "s" else b.astype(np.int64)
        p = np.array([int(x) * int(y) for x, y in zip(av, bv)], dtype=object)
        if op == "mad":
            c = m.read(inst.ops[3], 2 * w)
            p = p + np.array([int(x) for x in (_signed(c, 2 * w) if kind == "s" else c)], dtype=object)
        r = np.array([int(x) & ((1 << (2 * w)) - 1) for x in p], dtype=np.uint64)
        m.write(inst.ops[0], r, 2 * w)
        return
    nargs = {"add": 2, "sub": 2, "mul": 2, "min": 2, "max": 2, "fma": 3, "mad": 3, "neg": 1, "abs": 1}[op]
    if kind in ("f", "bf"):
        f = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
             "fma": lambda a, b, c: a * b + c, "mad": lambda a, b, c: a * b + c,
             "min": lambda a, b: np.fmin(a, b) if "NaN" not in mods else np.minimum(a, b),
             "max": lambda a, b: np.fmax(a, b) if "NaN" not in mods else np.maximum(a, b),
             "neg": lambda a: -a, "abs": lambda a: np.abs(a)}[op]
        if op in ("neg", "abs") and kind in ("f", "bf"):
            _bitsign(m, inst, t, op)
            return
        _lanes_apply(m, inst, t, nargs, f)
        return
    if kind == "b":
        raise PtxError(f"PTX instruction {op}.{'.'.join(inst.mods)} (an arithmetic op needs .s/.u/.f types)")
    _lanes_apply(m, inst, t, nargs, lambda *a: None, _int_arith(op, inst))  # type: ignore[arg-type]


def _bitsign(m: Machine, inst: Inst, t: str, op: str) -> None:
    """neg / abs of floats: the sign bit of each lane (NaNs keep their payload, as the hardware does)."""
    kind, w, k = _type_of(t)
    a = m.read(inst.ops[1], w * k)
    sign = U64(0)
    for lane in range(k):
        sign |= U64(1 << (lane * w + w - 1))
    r = a ^ sign if op == "neg" else a & ~sign
    if "ftz" in inst.mods and t == "f32":
        r = _round_f32(_f32(r), ftz=True)
    m.write(inst.ops[0], r, w * k)


def _approx(m: Machine, inst: Inst) -> None:
    t = _ty(inst)
    fn = {"ex2": np.exp2, "lg2": np.log2, "rcp": lambda x: 1.0 / x, "rsqrt": lambda x: 1.0 / np.sqrt(x),
          "sqrt": np.sqrt, "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "div": None}[inst.opcode]
    if inst.opcode == "div":
        _lanes_apply(m, inst, t, 2, lambda a, b: a / b)
        return
    # computed from the f32 input in float64: exact where the hardware approximates
    _lanes_apply(m, inst, t, 1, fn)


def _bitwise(m: Machine, inst: Inst) -> None:
    op = inst.opcode
    t = _ty(inst)
    kind, w, k = _type_of(t)
    total = w * k
    if op == "not":
        m.write(inst.ops[0], ~m.read(inst.ops[1], total), total)
        return
    if op == "lop3":
        a, b, c = (m.read(o, total) for o in inst.ops[1:4])
        lut = int(inst.ops[4].value) if inst.ops[4].kind == "imm" else None
        if lut is None:
            raise PtxError("lop3: the lookup table must be an immediate")
        r = np.zeros(m.lanes.n, U64)
        for i in range(8):
            if (lut >> i) & 1:
                r |= (a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)
        m.write(inst.ops[0], r, total)
        return
    a = m.read(inst.ops[1], total)
    if op in ("shl", "shr"):
        s = m.read(inst.ops[2], 32).astype(np.int64)
        s = np.minimum(s, w)
        if op == "shl":
            r = np.where(s >= w, U64(0), (a << np.minimum(s, w - 1).astype(U64)) & _mask(w))
        elif kind == "s":
            v = _signed(a, w)
            r = (v >> np.minimum(s, w - 1)).astype(np.int64).astype(U64)
        else:
            r = np.where(s >= w, U64(0), a >> np.minimum(s, w - 1).astype(U64))
        m.write(inst.ops[0], r, total)
        return
    b = m.read(inst.ops[2], total)
    r = {"and": a & b, "or": a | b, "xor": a ^ b}[op]
    m.write(inst.ops[0], r, total)


def _prmt(m: Machine, inst: Inst) -> None:
    modes = [x for x in inst.mods if x not in ("b32",)]
    if modes:
        raise PtxError(f"prmt mode .{modes[0]} (the default mode is interpreted)")
    a = m.read(inst.ops[1], 32)
    b = m.read(inst.ops[2], 32)
    c = m.read(inst.ops[3], 32)
    both = a | (b << U64(32))
    r = np.zeros(m.lanes.n, U64)
    for k in range(4):
        sel = (c >> U64(4 * k)) & U64(0xF)
        byte = (both >> ((sel & U64(7)) * U64(8))) & U64(0xFF)
        byte = np.where((sel & U64(8)) != 0, np.where((byte & U64(0x80)) != 0, U64(0xFF), U64(0)), byte)
        r |= byte << U64(8 * k)
    m.write(inst.ops[0], r, 32)


def _mov(m: Machine, inst: Inst) -> None:
    t = _ty(inst)
    kind, w, k = _type_of(t)
    total = w * k
    if total > 64:
        raise PtxError(f"mov.{t} (registers wider than 64 bits)")
    m.write(inst.ops[0], m.read(inst.ops[1], total), total)


def _selp(m: Machine, inst: Inst) -> None:
    t = _ty(inst)
    _, w, k = _type_of(t)
    a, b = m.read(inst.ops[1], w * k), m.read(inst.ops[2], w * k)
    c = m.read(inst.ops[3], 1) != 0
    m.write(inst.ops[0], np.where(c, a, b), w * k)


_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}


def _compare(cmp: str, a: np.ndarray, b: np.ndarray, is_float: bool) -> np.ndarray:
    if not is_float:
        return _CMP[cmp](a, b)
    nan = np.isnan(a) | np.isnan(b)
    if cmp == "num":
        return ~nan
    if cmp == "nan":
        return nan
    if cmp.endswith("u") and cmp[:-1] in _CMP:
        return _CMP[cmp[:-1]](a, b) | nan
    with np.errstate(invalid="ignore"):
        return _CMP[cmp](a, b) & ~nan


def _setp(m: Machine, inst: Inst) -> None:
    cmp = inst.mods[0]
    t = _ty(inst)
    kind, w, k = _type_of(t)
    a, b = m.read(inst.ops[1], w * k), m.read(inst.ops[2], w * k)
    combine = next((x for x in inst.mods[1:] if x in ("and", "or", "xor")), None)
    c = None
    if combine:
        src = inst.ops[3]
        neg = src.kind == "reg" and src.name.startswith("!")
        c = m.read(Operand("reg", src.name.lstrip("!")) if neg else src, 1) != 0
        c = ~c if neg else c
    res = []
    for lane in range(k):
        pa, pb = (a >> U64(lane * w)) & _mask(w), (b >> U64(lane * w)) & _mask(w)
        if kind in ("f", "bf"):
            dec, _ = _fcode("bf16" if kind == "bf" else f"f{w}")
            r = _compare(cmp, dec(pa), dec(pb), True)
        elif kind == "s":
            r = _compare(cmp, _signed(pa, w), _signed(pb, w), False)
        else:
            if cmp not in ("eq", "ne", "lo", "ls", "hi", "hs", "lt", "le", "gt", "ge"):
                raise PtxError(f"setp.{cmp}.{t}")
            r = _compare(cmp, pa, pb, False)
        if c is not None:
            r = {"and": r & c, "or": r | c, "xor": r ^ c}[combine]
        res.append(r)
    d = inst.ops[0]
    m.write(Operand("reg", d.name), res[0].astype(U64), 1)
    if d.pair is not None:
        if len(res) < 2:
            m.write(Operand("reg", d.pair), (~res[0]).astype(U64) & U64(1), 1)  # p|q: q is the negation
        else:
            m.write(Operand("reg", d.pair), res[1].astype(U64), 1)


def _cvt(m: Machine, inst: Inst) -> None:
    mods = [x for x in inst.mods]
    types = [x for x in mods if re.fullmatch(r"(b|s|u|f|bf)\d+(x\d)?|e\dm\dx\d|ue8m0x2|s2f6x2|e\dm\dx4", x)]
    if len(types) != 2:
        raise PtxError(f"cvt.{'.'.join(mods)}")
    dt, st = types
    flags = set(mods) - set(types)
    frac = next((x for x in ("rn", "rz", "rm", "rp") if x in flags), None)
    irnd = next((x for x in ("rni", "rzi", "rmi", "rpi") if x in flags), None)
    sat = "satfinite" in flags or "sat" in flags
    relu = "relu" in flags
    if any(x.startswith(("e", "ue", "s2")) for x in (dt, st)) or "rs" in flags or any("::" in x for x in flags):
        raise PtxError(f"PTX instruction cvt.{'.'.join(mods)} (fp4/fp6/fp8, scaled and stochastic conversions "
                       f"are not interpreted)")
    dk, dw, dl = _type_of(dt)
    sk, sw, sl = _type_of(st)
    if dl == 2 and sl == 1:  # cvt.rn.f16x2.f32 d, a, b: d = {cvt(a) high, cvt(b) low}
        if dk not in ("f", "bf") or st != "f32":
            raise PtxError(f"cvt.{'.'.join(mods)}")
        hi = _f32(m.read(inst.ops[1], 32))
        lo = _f32(m.read(inst.ops[2], 32))
        name = "bf16" if dk == "bf" else "f16"
        r = (_to_half(hi, name, frac or "rn", sat, relu) << U64(16)) | _to_half(lo, name, frac or "rn", sat, relu)
        m.write(inst.ops[0], r, 32)
        return
    if dl != 1 or sl != 1:
        raise PtxError(f"cvt.{'.'.join(mods)}")
    a = m.read(inst.ops[1], sw)
    if sk in ("f", "bf"):
        x = _fcode("bf16" if sk == "bf" else f"f{sw}")[0](a)
    elif sk == "s":
        x = _signed(a, sw)
    else:
        x = a
    if dk in ("f", "bf"):
        xf = np.asarray(x, dtype=np.float64)
        if dt == "f32":
            mode = frac or "rn"
            r = _round_f32(xf, mode, "ftz" in flags, "sat" in flags)
        elif dt == "f64":
            r = xf.view(np.uint64)
        else:
            r = _to_half(xf, "bf16" if dk == "bf" else "f16", frac or "rn", sat, relu)
        m.write(inst.ops[0], r, dw)
        return
    # to an integer
    if sk in ("f", "bf"):
        xf = np.asarray(x, dtype=np.float64)
        rnd = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil, None: np.trunc}[irnd]
        lo, hi = (-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if dk == "s" else (0, (1 << dw) - 1)
        with np.errstate(invalid="ignore"):
            v = np.where(np.isnan(xf), 0.0, np.clip(rnd(xf), lo, hi))  # float to int saturates, NaN is 0
        r = np.array([int(q) & ((1 << dw) - 1) for q in v], dtype=np.uint64)
        m.write(inst.ops[0], r, dw)
        return
    v = np.asarray(x).astype(np.int64) if sk == "s" else np.asarray(x)
    if sat:
        lo, hi = (-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if dk == "s" else (0, (1 << dw) - 1)
        v = np.clip(v.astype(np.float64), lo, hi).astype(np.int64)
    r = v.astype(np.int64).astype(U64) if np.asarray(v).dtype.kind == "i" else np.asarray(v, U64)
    m.write(inst.ops[0], r & _mask(dw), dw)


def _shfl(m: Machine, inst: Inst) -> None:
    if "sync" not in inst.mods:
        raise PtxError("shfl without .sync (deprecated before sm_70)")
    mode = next((x for x in ("up", "down", "bfly", "idx") if x in inst.mods), None)
    if mode is None:
        raise PtxError(f"shfl.{'.'.join(inst.mods)}")
    L = m.lanes
    a = m.read(inst.ops[1], 32)
    b = m.read(inst.ops[2], 32).astype(np.int64) & 31
    c = m.read(inst.ops[3], 32).astype(np.int64)
    clamp, seg = c & 0x1F, (c >> 8) & 0x1F
    lane = L.lane
    max_lane = (lane & seg) | (clamp & ~seg)
    min_lane = lane & seg
    if mode == "up":
        j = lane - b
        ok = j >= max_lane
    elif mode == "down":
        j = lane + b
        ok = j <= max_lane
    elif mode == "bfly":
        j = lane ^ b
        ok = j <= max_lane
    else:
        j = min_lane | (b & ~seg)
        ok = j <= max_lane
    j = np.where(ok, j, lane)
    src_t = L.tid - lane + j
    exists = src_t < L.nt
    src_row = np.where(exists, L.warp_start + j, L.row)
    src_row = np.clip(src_row, 0, L.n - 1)
    d = inst.ops[0]
    m.write(Operand("reg", d.name), a[src_row], 32)
    if d.pair is not None:
        m.write(Operand("reg", d.pair), (ok & exists).astype(U64), 1)


def _redux(m: Machine, inst: Inst) -> None:
    if "sync" not in inst.mods:
        raise PtxError(f"redux.{'.'.join(inst.mods)}")
    op = next((x for x in ("add", "min", "max", "and", "or", "xor") if x in inst.mods), None)
    t = _ty(inst)
    kind, w, _ = _type_of(t)
    if kind == "f" and w == 32 and op in ("min", "max"):
        return _redux_f32(m, inst, op)
    if op is None or w != 32 or kind == "f":
        raise PtxError(f"redux.{'.'.join(inst.mods)} (add/min/max .s32/.u32, and/or/xor .b32 are interpreted)")
    L = m.lanes
    a = m.read(inst.ops[1], 32)
    v = _signed(a, 32) if kind == "s" else a.astype(np.int64)
    keys, inv = np.unique(L.warp_start, return_inverse=True)
    if op in ("add", "min", "max"):
        init = {"add": 0, "min": np.iinfo(np.int64).max, "max": np.iinfo(np.int64).min}[op]
        acc = np.full(len(keys), init, np.int64)
        uf = {"add": np.add, "min": np.minimum, "max": np.maximum}[op]
        uf.at(acc, inv, v)
        r = acc[inv].astype(U64) & _mask(32)
    else:
        acc = np.full(len(keys), 0xFFFFFFFF if op == "and" else 0, np.uint64)
        uf = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        uf.at(acc, inv, a)
        r = acc[inv]
    m.write(inst.ops[0], r, 32)


def _warp_groups(m: Machine, member: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(warp of each row as 0..k-1, whether the row's lane is in its membermask, number of warps)."""
    L = m.lanes
    keys, inv = np.unique(L.warp_start, return_inverse=True)
    inside = ((member >> L.lane.astype(U64)) & U64(1)) != 0
    return inv, inside, len(keys)


def _vote(m: Machine, inst: Inst) -> None:
    """``vote.sync.{all,any,uni}.pred d, p, membermask`` and ``vote.sync.ballot.b32 d, p, membermask``:
    over the lanes of the member mask (which must all execute it, as PTX requires)."""
    mode = next((x for x in ("all", "any", "uni", "ballot") if x in inst.mods), None)
    if "sync" not in inst.mods or mode is None:
        raise PtxError(f"vote.{'.'.join(inst.mods)}")
    src = inst.ops[1]
    neg = src.kind == "reg" and src.name.startswith("!")
    p = m.read(Operand("reg", src.name.lstrip("!")) if neg else src, 1) != 0
    p = ~p if neg else p
    member = m.read(inst.ops[2], 32)
    inv, inside, k = _warp_groups(m, member)
    lane = m.lanes.lane
    if mode == "ballot":
        bits = np.zeros(k, np.uint64)
        np.bitwise_or.at(bits, inv, np.where(p & inside, U64(1) << lane.astype(U64), U64(0)))
        m.write(inst.ops[0], bits[inv] & member, 32)
        return
    n_true = np.zeros(k, np.int64)
    n_in = np.zeros(k, np.int64)
    np.add.at(n_true, inv, (p & inside).astype(np.int64))
    np.add.at(n_in, inv, inside.astype(np.int64))
    t, c = n_true[inv], n_in[inv]
    r = {"all": t == c, "any": t > 0, "uni": (t == 0) | (t == c)}[mode]
    m.write(inst.ops[0], r.astype(U64), 1)


def _elect(m: Machine, inst: Inst) -> None:
    """``elect.sync d|p, membermask``: the lowest lane of the member mask is the leader (PTX only
    promises a deterministic choice; the hardware also picks the lowest); d is its lane id, p is
    true in the leader."""
    if inst.mods != ["sync"]:
        raise PtxError(f"elect.{'.'.join(inst.mods)}")
    member = m.read(inst.ops[1], 32)
    low = np.zeros(len(member), np.int64)
    nz = member != 0
    mm = member[nz].astype(np.int64)
    low[nz] = np.log2(mm & -mm).astype(np.int64)
    d = inst.ops[0]
    m.write(Operand("reg", d.name), low.astype(U64), 32)
    if d.pair is not None:
        m.write(Operand("reg", d.pair), (nz & (m.lanes.lane == low)).astype(U64), 1)


def _redux_f32(m: Machine, inst: Inst, op: str) -> None:
    """``redux.sync.{min,max}{.abs}{.NaN}.f32``: the warp's least or greatest value; without .NaN a NaN
    loses to any number (minNum/maxNum), with it a NaN wins; .abs compares and returns |x|."""
    L = m.lanes
    a = _f32(m.read(inst.ops[1], 32)).astype(np.float64)
    if "abs" in inst.mods:
        a = np.abs(a)
    keys, inv = np.unique(L.warp_start, return_inverse=True)
    k = len(keys)
    nan = np.isnan(a)
    fill = np.inf if op == "min" else -np.inf
    best = np.full(k, fill)
    (np.minimum if op == "min" else np.maximum).at(best, inv, np.where(nan, fill, a))
    any_nan = np.zeros(k, bool)
    np.logical_or.at(any_nan, inv, nan)
    all_nan = np.ones(k, bool)
    np.logical_and.at(all_nan, inv, nan)
    r = np.where(any_nan if "NaN" in inst.mods else all_nan, np.nan, best)[inv]
    m.write(inst.ops[0], np.asarray(r, np.float32).view(np.uint32).astype(U64), 32)


def _refuse(m: Machine, inst: Inst) -> None:
    raise PtxError(f"PTX instruction {inst.opcode + ''.join('.' + x for x in inst.mods)!r}")


_OPS: Dict[str, Callable[[Machine, Inst], None]] = {
    "add": _arith, "sub": _arith, "mul": _arith, "mad": _arith, "fma": _arith, "min": _arith, "max": _arith,
    "neg": _arith, "abs": _arith,
    "ex2": _approx, "lg2": _approx, "rcp": _approx, "rsqrt": _approx, "sqrt": _approx, "tanh": _approx,
    "sin": _approx, "cos": _approx, "div": _approx,
    "and": _bitwise, "or": _bitwise, "xor": _bitwise, "not": _bitwise, "shl": _bitwise, "shr": _bitwise,
    "lop3": _bitwise, "prmt": _prmt, "mov": _mov, "selp": _selp, "setp": _setp, "cvt": _cvt,
    "shfl": _shfl, "redux": _redux, "vote": _vote, "elect": _elect,
}
