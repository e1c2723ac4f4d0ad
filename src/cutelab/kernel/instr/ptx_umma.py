"""Inline PTX that issues UMMAs (``tcgen05.mma``) through descriptors it builds itself, lowered to
the kernel IR's UMMA (``tcgen05_mma.UmmaOp``) when it is traced.

flash_attn.cute's SM100 kernels (its blackwell_helpers ``gemm_ptx_*`` and ``declare_ptx_*``) do not
call ``cute.gemm``: they build the 64-bit shared-memory descriptors by hand, the start-address field
from ``(smem_ptr.toint() & 0x3FFFF) >> 4`` OR'd with the layout's other fields (cutelab follows that
integer as ``address.AddressUnits``), pass them and the TMEM addresses to inline PTX, and issue
``@leader tcgen05.mma.cta_group::1.kind::f16 [tmem_acc], desc_a, desc_b, idesc, p`` there. Some of
their registers are declared at function scope by one ``asm`` statement and used by later ones
(``declare_ptx_smem_desc``/``declare_ptx_idesc``). cutelab has no machine addresses, so such a
program is not run by the PTX interpreter (``ptx``) but evaluated while it is traced, statement by
statement: a register holds a number, a descriptor word (an AddressUnits), a pair of them (a
64-bit descriptor), a runtime value of the kernel, the leader predicate of ``elect.sync`` or an
mbarrier's try-wait; the registers declared outside any ``{ }`` live on with the kernel's trace
(frontend/ptx_regs.py: inside a runtime loop or branch they may move, as flash_attn.cute moves Q's
descriptors by a stage and back in each iteration, but must be back by the end of each iteration
and arm). What it lowers:

- ``.reg`` declarations, ``mov.b32/.u32/.s32``, ``mov.b64`` packing and unpacking ``{lo, hi}``,
  ``add.u32/.s32`` (a descriptor word moves by 16-byte units), ``setp.ne/eq.b32`` on a number or a
  runtime value, ``elect.sync _|p, -1``;
- ``@p tcgen05.mma.cta_group::1.kind::{f16,tf32,f8f6f4,i8} [d], a, b, idesc, enable`` with p the
  elected leader: a UMMA whose instruction descriptor (a number) gives the types, M, N and the
  operands' majors; whose shared-memory operands are read through their descriptors (start
  address, LBO, SBO, swizzle: UMMA's canonical layouts); A may be ``[tmem_a + k]`` in tensor memory;
  the accumulator at the TMEM address ``[d]``; ``enable`` (0, 1 or a predicate) says whether it
  accumulates;
- the wait loop ``L: mbarrier.try_wait.parity.shared::cta.b64 P, [mbar], phase(, hint); @P bra D;
  bra L; D:``: ``cute.arch.mbarrier_wait(mbar, phase)``.

Anything else in such a program is a NotInterpreted error naming the instruction and the user's line.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ...errors import TraceError
from .ptx import NotInterpreted, _split_top

__all__ = ["lowers", "asm_umma"]

_IMM = re.compile(r"[-+]?(0[xX][0-9a-fA-F]+|\d+)[uU]?")


def _statements(asm: str) -> List[Tuple[str, str, int]]:
    """(kind, text, scope depth) of each label ("label") and statement ("stmt"); a brace at the start
    of a statement opens or closes a scope, one inside it is a vector."""
    asm = re.sub(r"//[^\n]*", "", asm)
    asm = re.sub(r"/\*.*?\*/", "", asm, flags=re.S)
    out: List[Tuple[str, str, int]] = []
    i, n, depth = 0, len(asm), 0
    while i < n:
        ch = asm[i]
        if ch.isspace() or ch == ";":
            i += 1
        elif ch == "{":
            depth, i = depth + 1, i + 1
        elif ch == "}":
            depth, i = depth - 1, i + 1
        else:
            j = asm.find(";", i)
            j = n if j < 0 else j
            st = asm[i:j].strip()
            i = j + 1
            while True:
                m = re.match(r"([A-Za-z_$][\w$]*)\s*:(?!:)\s*", st)
                if m is None:
                    break
                out.append(("label", m.group(1), depth))
                st = st[m.end():]
            if st:
                out.append(("stmt", st, depth))
    return out


def lowers(asm: str, operands: List[Any], constraints: str) -> bool:
    """Whether this module lowers the program: it issues a UMMA, takes a descriptor word, uses registers an
    earlier statement declared at function scope, or (without outputs) declares such registers."""
    from ...address import AddressUnits

    from ..frontend.ptx_regs import table
    from ..frontend.trace import active

    if "tcgen05.mma" in asm or any(isinstance(x, AddressUnits) for x in operands):
        return True
    t = active()
    if t is not None and any(re.search(rf"(?<![\w$%]){re.escape(n)}(?![\w$])", asm) for n in table(t)):
        return True  # it reads or moves registers an earlier statement declared at function scope
    # a program that only sets up registers for later statements (flash_attn.cute's declare_ptx_idesc): no
    # outputs, declarations at function scope, nothing but declarations, moves and adds
    outs = [c for c in constraints.split(",") if c.strip().startswith(("=", "+"))]
    sts = _statements(asm)
    return (not outs and any(k == "stmt" and d == 0 and s.startswith(".reg") for k, s, d in sts)
            and all(k == "stmt" and re.match(r"(\.reg|mov\.|add\.)", s) for k, s, d in sts))


class _Leader:
    """The predicate ``elect.sync`` sets: true in one lane of the warp."""

    def __repr__(self) -> str:
        return "elect.sync leader"


class _TryWait:
    """The predicate ``mbarrier.try_wait`` sets."""

    def __init__(self, mbar: Any, phase: Any, label: Optional[str]):
        self.mbar, self.phase, self.label = mbar, phase, label


_LEADER = _Leader()


class _Machine:
    def __init__(self, t: Any, operands: List[Any], where: str, what: str):
        self.t, self.ops, self.where, self.what = t, operands, where, what
        from ..frontend.ptx_regs import table

        self.local: List[Dict[str, Any]] = [{}]
        self.glob = table(t)  # name -> [value]; runtime regions check them (frontend.ptx_regs.Regions)

    def fail(self, msg: str, instr: str = "") -> Any:
        raise NotInterpreted(f"{self.what} at {self.where}: {msg}", instr or msg)

    # ---- registers
    def declare(self, text: str, depth: int) -> None:
        m = re.fullmatch(r"\.reg\s+\.(\w+)\s+(.*)", text, re.S)
        if m is None:
            self.fail(f"declaration {text!r}")
        for name in _split_top(m.group(2)):
            mm = re.fullmatch(r"([%\w$]+)\s*<\s*(\d+)\s*>", name.strip())
            names = [f"{mm.group(1)}{k}" for k in range(int(mm.group(2)))] if mm else [name.strip()]
            for nm in names:
                if depth == 0:
                    self.glob[nm] = [None]
                else:
                    self.local[-1][nm] = None

    def _scope(self, name: str) -> Optional[Dict[str, Any]]:
        for sc in reversed(self.local):
            if name in sc:
                return sc
        return None

    def read(self, tok: str) -> Any:
        tok = tok.strip()
        if tok.startswith("$"):
            return self.ops[int(tok[1:])]
        if _IMM.fullmatch(tok):
            t = tok.lstrip("+-").rstrip("uU")
            v = int(t, 16) if t[:2] in ("0x", "0X") else int(t)
            return -v if tok.startswith("-") else v
        if tok.startswith("{") and tok.endswith("}"):
            return ("pair",) + tuple(self.read(x) for x in _split_top(tok[1:-1]))
        sc = self._scope(tok)
        if sc is not None:
            v = sc[tok]
        elif tok in self.glob:
            v = self.glob[tok][0]
        else:
            return self.fail(f"register {tok!r} is not declared (nor declared at function scope by an earlier "
                             f"asm statement of this kernel)")
        if v is None:
            self.fail(f"register {tok!r} is read before it is written")
        return v

    def write(self, name: str, v: Any) -> None:
        name = name.strip()
        sc = self._scope(name)
        if sc is not None:
            sc[name] = v
            return
        if name not in self.glob:
            self.fail(f"register {name!r} is not declared")
        self.glob[name][0] = v


def _num(v: Any) -> Optional[int]:
    """v as a Python int, if it is a known number."""
    if isinstance(v, (bool, int, np.integer)):  # cutlass integers (Int32(5)) are ints
        return int(v)
    return None


def asm_umma(operands: List[Any], asm: str, constraints: str, where: str, what: str) -> None:
    """Lower the program while it is traced (see the module docstring)."""
    from ..frontend.trace import current

    if any(c.strip().startswith(("=", "+")) for c in constraints.split(",")):
        raise NotInterpreted(f"{what} at {where}: a program that issues UMMAs or keeps function-scope registers "
                             f"is lowered while traced, and outputs ('=' constraints) are not supported there",
                             "tcgen05.mma with outputs")
    t = current(what)
    m = _Machine(t, list(operands), where, what)
    sts = _statements(asm)
    i = 0
    while i < len(sts):
        kind, text, depth = sts[i]
        while len(m.local) < depth + 1:
            m.local.append({})
        del m.local[depth + 1:]
        i += 1
        if kind == "label":
            continue
        if text.startswith(".reg"):
            m.declare(text, depth)
            continue
        mm = re.fullmatch(r"(@!?[%\w$]+\s+)?([a-z][\w.:]*)\s*(.*)", text, re.S)
        if mm is None:
            m.fail(f"statement {text!r}")
        pred = mm.group(1).strip()[1:] if mm.group(1) else None
        opcode, args = mm.group(2), [a.strip() for a in _split_top(mm.group(3))] if mm.group(3).strip() else []
        i = _step(m, sts, i, pred, opcode, args, text)


def _step(m: _Machine, sts: List[Tuple[str, str, int]], i: int, pred: Optional[str], opcode: str, args: List[str],
          text: str) -> int:
    """Run one statement; returns the index of the next one."""
    from ...address import AddressUnits

    base = opcode.split(".")[0]
    if pred is not None and base not in ("tcgen05", "bra"):
        m.fail(f"predicated {opcode!r} (only the UMMA and the wait loop's branch may be predicated here)", opcode)
    if base == "mov":
        dst, src = args
        v = m.read(src)
        if dst.startswith("{"):  # unpack a 64-bit pair
            if not (isinstance(v, tuple) and v[0] == "pair" and len(v) == 3):
                n = _num(v)
                if n is None:
                    m.fail(f"{text!r}: unpacking a value that is not a pair of 32-bit words", opcode)
                v = ("pair", n & 0xFFFFFFFF, (n >> 32) & 0xFFFFFFFF)
            lo, hi = _split_top(dst[1:-1])
            m.write(lo, v[1])
            m.write(hi, v[2])
        else:
            m.write(dst, v)
        return i
    if base == "add" and opcode.split(".")[-1] in ("u32", "s32"):
        dst, a, b = args
        x, y = m.read(a), m.read(b)
        if isinstance(y, AddressUnits):
            x, y = y, x
        if isinstance(x, AddressUnits) and _num(y) is not None:
            k = _num(y)
            k = k - (1 << 32) if k >= 1 << 31 else k
            m.write(dst, x + k if k >= 0 else x - (-k))
        elif _num(x) is not None and _num(y) is not None:
            m.write(dst, (_num(x) + _num(y)) & 0xFFFFFFFF)
        else:
            m.write(dst, x + y)  # runtime values: the kernel's own add
        return i
    if base == "setp" and opcode.split(".")[1] in ("ne", "eq"):
        p, a, b = args
        x, y = m.read(a), m.read(b)
        if _num(x) is not None and _num(y) is not None:
            r: Any = (_num(x) != _num(y)) == (opcode.split(".")[1] == "ne")
        else:
            r = (x != y) if opcode.split(".")[1] == "ne" else (x == y)
        m.write(p, r)
        return i
    if base == "elect":
        if len(args) != 2 or not args[0].startswith("_|") or _num(m.read(args[1])) not in (-1, 0xFFFFFFFF):
            m.fail(f"{text!r}: cutelab lowers elect.sync _|p, -1 (the whole warp, no result register)", opcode)
        m.write(args[0][2:], _LEADER)
        return i
    if opcode.startswith("mbarrier.try_wait.parity"):
        return _wait_loop(m, sts, i, args, text, opcode)
    if opcode.startswith("tcgen05.mma."):
        _umma(m, pred, opcode, args, text)
        return i
    return m.fail(f"PTX instruction {opcode!r} in a program that issues UMMAs through descriptors (cutelab lowers "
                  f"mov, add, setp, elect.sync, tcgen05.mma and an mbarrier try-wait loop there)", opcode)


def _wait_loop(m: _Machine, sts: List[Tuple[str, str, int]], i: int, args: List[str], text: str, opcode: str) -> int:
    """``L: mbarrier.try_wait.parity P, [mbar], phase(, hint); @P bra D; bra L; D:`` as one wait."""
    from ..frontend.smem import SharedAddress
    from .mbarrier import mbarrier_wait

    if len(args) not in (3, 4) or not args[1].startswith("["):
        m.fail(f"{text!r}: expected mbarrier.try_wait.parity P, [mbar], phase", opcode)
    mbar = m.read(args[1].strip("[] "))
    label = sts[i - 2][1] if i >= 2 and sts[i - 2][0] == "label" else None
    rest = [s for s in sts[i:i + 3]]
    ok = (label is not None and len(rest) == 3 and rest[0][0] == "stmt"
          and re.fullmatch(rf"@{re.escape(args[0])}\s+bra(\.uni)?\s+(\w+)", rest[0][1]) is not None
          and rest[1][0] == "stmt" and re.fullmatch(rf"bra(\.uni)?\s+{re.escape(label)}", rest[1][1]) is not None
          and rest[2][0] == "label")
    if ok:
        done = re.fullmatch(rf"@{re.escape(args[0])}\s+bra(\.uni)?\s+(\w+)", rest[0][1]).group(2)
        ok = done == rest[2][1]
    if not ok:
        m.fail(f"{text!r}: cutelab lowers mbarrier.try_wait only in the loop 'L: try_wait P, ...; @P bra D; bra L; D:'",
               opcode)
    if not isinstance(mbar, SharedAddress):
        m.fail(f"{text!r}: the mbarrier must be a shared-memory address (mbar_ptr.toint()), got {mbar!r}", opcode)
    mbarrier_wait(mbar.ptr, m.read(args[2]))
    return i + 3


# --------------------------------------------------------------------------- the UMMA

_DESC_LAYOUT = {0: 0, 6: 1, 4: 2, 2: 3}  # a UMMA descriptor's layout type -> B of its Swizzle<B,4,3>
_KINDS = {"f16": {0: "Float16", 1: "BFloat16"}, "tf32": {2: "TFloat32"},
          "f8f6f4": {0: "Float8E4M3FN", 1: "Float8E5M2"}, "i8": {0: "Uint8", 1: "Int8"}}


def _mma_op(kind: str, idesc: int, group: int, a_tmem: bool, what: str) -> Any:
    """The tcgen05 MMA op an instruction descriptor describes (tcgen05_mma.umma_idesc's fields)."""
    from ... import numeric
    from ...nvgpu import OperandMajorMode
    from ...nvgpu import tcgen05

    fmts = _KINDS.get(kind)
    if fmts is None:
        raise TraceError(f"{what}: tcgen05.mma .kind::{kind} is not lowered (f16, tf32, f8f6f4, i8 are)")
    if idesc & 0b1111 or idesc & (1 << 6) or idesc & (0b11 << 13) or idesc & (0b11 << 30):
        raise TraceError(f"{what}: instruction descriptor 0x{idesc:x} asks for sparsity, saturation, negation or a "
                         f"max shift, which cutelab does not lower")
    c = (idesc >> 4) & 3
    a, b = (idesc >> 7) & 7, (idesc >> 10) & 7
    if a not in fmts or b not in fmts or c not in (0, 1, 2):
        raise TraceError(f"{what}: instruction descriptor 0x{idesc:x}: A/B formats ({a}, {b}) or D format {c} are not "
                         f"those of .kind::{kind} that cutelab lowers")
    at, bt = getattr(numeric, fmts[a]), getattr(numeric, fmts[b])
    ct = {0: numeric.Float16, 1: numeric.Float32, 2: numeric.Int32}[c]
    n, mm = ((idesc >> 17) & 0x3F) << 3, ((idesc >> 24) & 0x1F) << 4
    major = lambda bit: OperandMajorMode.MN if idesc >> bit & 1 else OperandMajorMode.K  # noqa: E731
    cg = tcgen05.CtaGroup.ONE if group == 1 else tcgen05.CtaGroup.TWO
    src = tcgen05.OperandSource.TMEM if a_tmem else tcgen05.OperandSource.SMEM
    K = 256 // at.width
    if kind == "f16":
        return tcgen05.MmaF16BF16Op(at, ct, (mm, n, K), cg, src, major(15), major(16))
    if kind == "tf32":
        return tcgen05.MmaTF32Op((mm, n, K), cg, src, major(15), major(16))
    if kind == "i8":
        return tcgen05.MmaI8Op(at, (mm, n, K), cg, src, major(15), major(16))
    return tcgen05.MmaF8F6F4Op(at, bt, ct, (mm, n, K), cg, src, major(15), major(16))


def _canonical(MN: int, K: int, dtype: Any, bits: int, major: str, lbo: int, sbo: int) -> np.ndarray:
    """Element offsets (MN*K, column-major: mn + MN*k) of the canonical UMMA layout with these
    descriptor fields (16-byte units), from the start address; GMMA's layouts (wgmma.gmma_desc_fields)."""
    T = 128 // dtype.width
    W = {0: 1, 1: 2, 2: 4, 3: 8}[bits]
    mn = np.arange(MN)[:, None]
    k = np.arange(K)[None, :]
    if major == "K":
        lbo_e = lbo * T if bits == 0 else T
        off = (mn % 8) * W * T + (mn // 8) * sbo * T + (k % T) + (k // T) * lbo_e
    elif bits == 0:
        off = (mn % T) + (mn // T) * sbo * T + (k % 8) * T + (k // 8) * lbo * T
    else:
        off = (mn % T) + ((mn // T) % W) * T + (mn // (T * W)) * lbo * T + (k % 8) * W * T + (k // 8) * sbo * T
    return off.T.reshape(-1).astype(np.int64)  # k-major order of _Operand.phys: index mn + MN * k


def _desc_operand(m: _Machine, v: Any, P: int, K: int, dtype: Any, major: str, name: str, text: str) -> Any:
    """The shared-memory operand a 64-bit descriptor (a pair: AddressUnits low word, number high word) points at."""
    from ...address import AddressUnits
    from ...swizzle import Swizzle
    from ..frontend.engines import SmemEngine
    from .tcgen05_mma import _Operand
    from .tma import split_base
    from .wgmma import _LAYOUT_TYPE

    what = f"{m.what} at {m.where}: {text!r}: operand {name}"
    if not (isinstance(v, tuple) and v[0] == "pair" and isinstance(v[1], AddressUnits) and _num(v[2]) is not None):
        raise TraceError(f"{what}: expected a shared-memory descriptor whose start address is a shared pointer's "
                         f"(smem_ptr.toint() & 0x3FFFF) >> 4, got {v!r}")
    lo, hi = v[1], _num(v[2])
    if lo.shift != 4:
        raise TraceError(f"{what}: the start address must be in 16-byte units (>> 4), not >> {lo.shift}")
    lbo, sbo = (lo.bits >> 16) & 0x3FFF, hi & 0x3FFF
    version, base_off, lbo_mode, lt = (hi >> 14) & 3, (hi >> 17) & 7, (hi >> 20) & 1, (hi >> 29) & 7
    if version != 1 or base_off or lbo_mode or lt not in _DESC_LAYOUT or lo.bits & ~(0x3FFF << 16):
        raise TraceError(f"{what}: descriptor fields version {version}, base offset {base_off}, LBO mode {lbo_mode}, "
                         f"layout type {lt}: cutelab lowers version 1, base offset 0, LBO mode 0 and the layout types "
                         f"0, 2, 4, 6 (no swizzle, 128B, 64B, 32B)")
    bits = _DESC_LAYOUT[lt]
    ptr = lo.addr.ptr
    eng = ptr.engine
    sh = getattr(eng, "param", None)
    if not isinstance(eng, SmemEngine) or sh is None:
        raise TraceError(f"{what}: the descriptor's address is not in this CTA's shared memory ({ptr})")
    root = getattr(sh, "base", sh)
    if root.dtype.name != dtype.name and {root.dtype.name, dtype.name} != {"f32", "tf32"}:
        seng, _ = SmemEngine(root).recast(0, dtype)
        sh = seng.param
    else:
        sh = root
    byte = lo.byte_offset()  # from the start of the array (an alias starts where its base does)
    size = dtype.bytes  # (the kinds lowered have elements of 8 bits or more)
    if isinstance(byte, (int, np.integer)) and int(byte) % 16:
        raise TraceError(f"{what}: the start address is not 16-byte aligned")
    start = byte // size
    canon = _canonical(P, K, dtype, bits, major, lbo, sbo)
    period = max(1, (1 << (bits + 7)) // size) if bits else max(1, 16 // size)
    base, const = split_base(start, period, what)
    logical = const + canon
    if bits:
        sw = Swizzle(bits, 4 - int(np.log2(size)), 3)
        phys = np.asarray(sw(logical), dtype=np.int64)
    else:
        phys = logical
    fields = (_LAYOUT_TYPE[bits], lbo, sbo)  # what the CUDA printer's umma_desc takes
    return _Operand(sh, base, np.array([int(logical[0])], np.int64), phys[None, :], dtype, fields)


def _tmem_a(m: _Machine, tok: str, P: int, K: int, dtype: Any, text: str) -> Any:
    """Operand A in tensor memory at ``[addr (+ k)]`` (TMEM address lane << 16 | column): row m in lane m,
    its K elements in consecutive columns."""
    from ...nvgpu.tcgen05.tmem import _elems_per_column, tmem_dp_stride
    from .tcgen05_mma import _Operand

    inner = tok.strip()[1:-1]
    parts = [p.strip() for p in inner.split("+")]
    addr: Any = 0
    for p in parts:
        v = m.read(p)
        addr = addr + (v if _num(v) is None else _num(v))
    if P != 128:
        raise TraceError(f"{m.what} at {m.where}: {text!r}: A in tensor memory is lowered for UMMAs of 128 rows")
    epc, dp = _elems_per_column(dtype), tmem_dp_stride(dtype)
    n = _num(addr)
    if n is None:
        from ..ir.symbolic import floordiv, is_sym, mod

        if not is_sym(addr):
            raise TraceError(f"{m.what} at {m.where}: {text!r}: the TMEM address of A must be a number or an index "
                             f"expression, got {addr!r}")
        base = floordiv(addr, 65536) * dp + mod(addr, 65536) * epc
    else:
        base = (n >> 16) * dp + (n & 0xFFFF) * epc
    want = (np.arange(P)[None, :] * dp + np.arange(K)[:, None]).reshape(-1)
    return _Operand(None, base, want[:1].copy(), want[None, :], dtype, None)


def _umma(m: _Machine, pred: Optional[str], opcode: str, args: List[str], text: str) -> None:
    from ..frontend.trace import TraceValue
    from ..ir.symbolic import is_sym
    from .tcgen05_mma import UmmaOp

    mm = re.fullmatch(r"tcgen05\.mma\.cta_group::([12])\.kind::(\w+)", opcode)
    if mm is None or len(args) != 5:
        m.fail(f"{text!r}: cutelab lowers tcgen05.mma.cta_group::N.kind::K [d], a, b, idesc, enable", opcode)
    if pred is None or m.read(pred.lstrip("!")) is not _LEADER or pred.startswith("!"):
        m.fail(f"{text!r}: the UMMA must be predicated on elect.sync's leader (one thread of the warp issues it)",
               opcode)
    group, kind = int(mm.group(1)), mm.group(2)
    if group != 1:
        m.fail(f"{text!r}: 2-CTA UMMAs (cta_group::2) issued from inline PTX are not lowered yet", opcode)
    idesc = _num(m.read(args[3]))
    if idesc is None:
        raise TraceError(f"{m.what} at {m.where}: {text!r}: the instruction descriptor must be a number known when "
                         f"the kernel is traced")
    a_tmem = args[1].startswith("[")
    where = f"{m.what} at {m.where}"
    op = _mma_op(kind, idesc, group, a_tmem, f"{where}: {text!r}")
    M, N, K = op.shape_mnk
    maj = lambda x: "MN" if x.name == "MN" else "K"  # noqa: E731
    a = (_tmem_a(m, args[1], M, K, op.a_dtype, text) if a_tmem else
         _desc_operand(m, m.read(args[1]), M, K, op.a_dtype, maj(op.a_major_mode), "A", text))
    b = _desc_operand(m, m.read(args[2]), N, K, op.b_dtype, maj(op.b_major_mode), "B", text)
    d = m.read(args[0].strip("[] "))
    acc = _num(d)
    if acc is None:
        if not is_sym(d):
            raise TraceError(f"{where}: {text!r}: the accumulator's TMEM address must be a number or an index "
                             f"expression, got {d!r}")
        acc = d
    en = m.read(args[4])
    if isinstance(en, TraceValue):
        from ...numeric import Boolean

        en = (en if en.dtype is Boolean else en.to(Boolean)).refs[0]
    elif _num(en) is not None:
        en = bool(_num(en))
    else:
        raise TraceError(f"{where}: {text!r}: the enable-input-d operand must be 0, 1 or a predicate set from a "
                         f"runtime value, got {en!r}")
    from ...nvgpu.tcgen05.tmem import tmem_dp_stride

    dp = tmem_dp_stride(op.acc_dtype)
    offs = (np.arange(M)[None, :] * dp + np.arange(N)[:, None]).reshape(1, 1, -1)  # index m + M * n
    m.t.emit(UmmaOp(op, a, b, acc, offs.astype(np.int64), en, m.where))
