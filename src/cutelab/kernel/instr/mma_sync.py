"""``cute.gemm`` inside a traced kernel: warp-level tensor-core MMAs (SM80 ``mma.sync``).

``mma_sync_gemm(tiled_mma, d, a, b, c)`` (what ``cute.gemm`` runs in a kernel for these ops, through
``cutelab.kernel.instr.gemm``'s dispatch) takes register fragments partitioned by the tiled MMA
(``thr_mma.partition_*`` / ``make_fragment_*``) and emits one ``MmaSync`` op per MMA atom
instance of the thread: for every k, m, n of the fragments' rest modes, the atom's A values of
(m, k), B values of (n, k) and C values of (m, n) go in, and fresh D values come out. Along K
the result of one instruction is the C of the next, as CuTe's ``gemm`` chains them.

``MmaSync`` is a warp op: its 32 lanes hand in their registers together.

- CPU: gather the warp's A (M x K), B (N x K) and C (M x N) tiles through the atom's TV layouts
  (lane ``l`` holds values ``tv(l, v)`` of the tile, column-major), compute ``C + A B^T`` and
  scatter D back the same way. Products of f16/bf16 values are exact in float64; the K products
  and C are summed in float64 and rounded once to the accumulator type (round to nearest
  even). The tensor cores sum in their own order with at least f32 precision, so results agree
  with the GPU to the last bit whenever the exact sum is representable (small integers) and
  within the accumulator's rounding otherwise.
- CUDA: inline PTX ``mma.sync.aligned.m16n8k{8,16}.row.col.{f32,f16}.{f16,bf16}...`` on
  32-bit registers, each packing two 16-bit values (the lower one first); for the SM89 fp8 ops
  (``warp.MmaFP8Op``: e4m3/e5m2, m16n8k16 and m16n8k32) ``mma.sync...{f32,f16}.{e4m3,e5m2}...``
  with four 8-bit values per register (PTX ISA 8.7 for the f16 accumulator and for k16; a GPU of
  compute capability 8.9 or newer). The fp8 products are exact in float64 too. For sm_90a ptxas
  lowers each fp8 m16n8k32 to two f16 HMMA.16816 (every fp8 value is exact in f16), so the sums
  are the f16 MMA's; Ada (sm_89) runs it natively, and its accumulation may keep fewer bits.

>>> from cutelab.nvgpu import warp
>>> import cutelab as cute
>>> ptx_name(warp.MmaF16BF16Op(cute.BFloat16, cute.Float32, (16, 8, 16)))
'mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32'
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from ... import int_tuple as it
from ...errors import TraceError
from ..ir.nodes import Op, Reg
from ..frontend.trace import TraceValue, current

__all__ = ["MmaSync", "mma_sync_gemm", "ptx_name"]


def _op_of(mma: Any) -> Any:
    return getattr(mma, "op", None)


_PTX_TYPE = {"f16": "f16", "bf16": "bf16", "f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}


def ptx_name(op: Any) -> str:
    """The PTX instruction of a warp MMA op (mma.sync...)."""
    m, n, k = op.shape_mnk
    ab = _PTX_TYPE[op.ab_dtype.name]
    acc = {"f16": "f16", "f32": "f32"}[op.acc_dtype.name]
    return f"mma.sync.aligned.m{m}n{n}k{k}.row.col.{acc}.{ab}.{ab}.{acc}"


def _tv_pq(tv: Any, P: int) -> Tuple[np.ndarray, np.ndarray]:
    """(row, col) in a P x Q column-major tile of every (lane, value) of a TV layout."""
    nv = it.product(tv.shape[1]) if isinstance(tv.shape, tuple) else 1
    offs = np.asarray(tv.offsets()).reshape(nv, 32).T  # offsets are column-major over (T, V)
    return offs % P, offs // P


def _flat_gather(b: Any, refs: Sequence[tuple], dt: Any, idx: np.ndarray, W: int) -> Any:
    """(register, flat element indices (distinct operands, warps, len(idx)), each op's operand
    among the distinct ones or None when all differ) when every operand value of every op (refs:
    one tuple of Refs per op) is an element of one register of type dt: the ops' tiles are then
    one np.take of that register (value idx[e] of the tile of op j in warp w being lane
    idx[e] // nv's element refs[j][idx[e] % nv]), the ops that read the same elements (cute.gemm's
    A for every n, B for every m) sharing theirs. None otherwise. Cached on the kernel's IR."""
    cache = b.ir.__dict__.setdefault("_cpu_mma_gathers", {})
    key = (tuple(id(r) for r in refs), id(idx), W)
    got = cache.get(key)
    if got is None or got[0] is not refs[0]:
        first = refs[0][0] if refs and refs[0] else None
        plan = None
        if isinstance(first, tuple) and first[0].dtype.name == dt.name:
            reg = first[0]
            if all(isinstance(x, tuple) and x[0] is reg for r in refs for x in r):
                nv = len(refs[0])
                cols = [tuple(x[1] for x in r) for r in refs]
                uniq = list(dict.fromkeys(cols))
                which = None if len(uniq) == len(cols) else np.asarray([uniq.index(c) for c in cols], dtype=np.intp)
                lane, val = idx // nv, idx % nv
                per_warp = lane[None, :] * reg.n + np.asarray(uniq, dtype=np.int64)[:, val]  # in one warp's (lanes, n)
                where = per_warp[:, None, :] + (np.arange(W, dtype=np.int64) * (32 * reg.n))[None, :, None]
                plan = (reg, where, which)
        if len(cache) > 256:
            cache.clear()
        got = cache[key] = (refs[0], plan)
    return got[1]


def _tiles(b: Any, flat: Any, dt: Any, w0: int, w1: int, P: int, Q: int) -> np.ndarray:
    """The float64 P x Q tiles of every op of a batch in warps w0..w1 (op-major), from a plan of
    _flat_gather."""
    from ..cpu.context import to_real

    reg, where, which = flat
    raw = np.take(b.regs[reg.id], where[:, w0:w1])
    if dt.name == "f16":  # f16 to float64 at once (exact, as through float32)
        v = raw.view(np.float16).astype(np.float64)
    else:
        v = to_real(raw, dt).astype(np.float64)
    if which is not None:  # each op's tiles from the distinct operands'
        v = np.take(v, which, axis=0)
    return v.reshape(-1, P, Q)


_TILES = 256  # tiles of one operand per einsum of a batch (a few hundred KB of float64)

#: 2**s for A/B types whose every value times 2**s is an integer (their smallest subnormal is 2**-s)
#: below 2**41: _exact_products may test their sums for exactness
_EXACT_SCALE = {"f16": 2.0 ** 24, "f8E4M3FN": 2.0 ** 9, "f8E5M2": 2.0 ** 16}


def _exact_plan(ops: Sequence[Any], b: Any, fa: Any, fb: Any, oc: np.ndarray, M: int, N: int) -> Any:
    """For _exact_batch, cached on the kernel's IR: (distinct A operands, distinct B operands, the
    element of a warp's (na * M) x (nb * N) product that each lane's sum is (32, ops * values), the
    accumulator's columns to gather as C (None: its columns as they are), the columns of the sums
    that each op's D is). Where the ops' C values are all of the accumulator's columns, once each
    (cute.gemm's C), the sums are made in its column order (no gather of C). None when the ops are
    not (nearly) all the pairs of their distinct A and B operands (cute.gemm's (m, n) loop)."""
    cache = b.ir.__dict__.setdefault("_cpu_mma_exact", {})
    key = (id(ops[0]), len(ops), id(fa), id(fb))
    got = cache.get(key)
    if got is None or got[0] is not ops[0]:
        k = len(ops)
        na, nb = fa[1].shape[0], fb[1].shape[0]
        plan = None
        if na * nb <= 2 * k:
            ja = np.arange(k) if fa[2] is None else fa[2]
            jb = np.arange(k) if fb[2] is None else fb[2]
            p, q = oc // N, oc % N  # each (lane, value)'s row and column in the D tile
            idx = ((ja[None, :, None] * M + p[:, None, :]) * (nb * N) + jb[None, :, None] * N
                   + q[:, None, :]).reshape(32, -1)
            reg, nd = ops[0].c[0][0], len(ops[0].c)
            cols = [x[1] for o in ops for x in o.c]
            if sorted(cols) == list(range(reg.n)):  # the C values are the accumulator's columns, once each:
                order = np.argsort(cols)  # sum in its column order, each op's D a slice of that where it can
                idx = idx[:, order]
                outs = []
                for i in range(k):
                    c = cols[i * nd:(i + 1) * nd]
                    outs.append(slice(c[0], c[0] + nd) if c == list(range(c[0], c[0] + nd))
                                else np.asarray(c, dtype=np.intp))
                plan = (na, nb, idx, None, outs)
            else:
                plan = (na, nb, idx, np.asarray(cols, dtype=np.intp),
                        [slice(i * nd, (i + 1) * nd) for i in range(k)])
        if len(cache) > 256:
            cache.clear()
        got = cache[key] = (ops[0], plan)
    return got[1]


def _exact_batch(ops: Sequence[Any], b: Any, flats: Any, oc: np.ndarray, M: int, N: int, K: int,
                 into: Any = None) -> Any:
    """Run a batch of MmaSyncs of every warp (each operand one register: _flat_gather's plans
    flats) as one matrix product per warp, every distinct A tile against every distinct B tile,
    when every sum over K of A B^T is exact in float64 whatever the order of its terms: it then
    equals einsum's, and ``sum + C`` rounded once is what ``interpret_batch`` makes. That holds
    when every value of A is a multiple of 2**la and every value of B of 2**lb (the lowest set
    bits of all of them) and K * max|A| * max|B| < 2**(52 + la + lb): every partial sum is an
    integer multiple of 2**(la + lb) below 2**52 of them. False (nothing done) when the batch is
    not of that form or that is not shown (a non-finite value, magnitudes far apart).

    into: the accumulator register (see ``interpret_batch``) when every op's D goes where its C
    came from; where the C values are all of its columns, D is written there ("into") and no
    D register is made."""
    from ..cpu.context import from_real, to_real

    fa, fb, fc = flats
    plan = _exact_plan(ops, b, fa, fb, oc, M, N)
    if plan is None:
        return False
    na, nb, idx, cols, outs = plan
    first = ops[0]
    ab, acc = first.op.ab_dtype, first.op.acc_dtype
    scale = _EXACT_SCALE[ab.name]
    W, n, nd = b.n // 32, b.n, first.d.n
    scratch = b.__dict__.setdefault("_mma_scratch", {})  # arrays of this batch's shapes, made once

    def buf(tag: str, shape: tuple, dtype: Any) -> np.ndarray:
        got = scratch.get(tag)
        if got is None or got.shape != shape or got.dtype != dtype:
            got = scratch[tag] = np.empty(shape, dtype=dtype)
        return got

    vals = []
    span = float(K)
    for tag, (reg, where, _) in zip("ab", (fa, fb)):
        regs = b.regs[reg.id]
        raw = np.take(regs, where, out=buf(tag + "raw", where.shape, regs.dtype))
        v = buf(tag, where.shape, np.float32)  # the values (f16, fp8: exact in float32)
        if ab.name == "f16" and raw.dtype.itemsize == 2:  # numpy's own f16 -> f32 of every pattern, looked up
            np.take(_f16_table(), raw.view(np.uint16), out=v)
        else:
            np.copyto(v, raw.view(np.float16) if ab.name == "f16" else to_real(raw, ab))
        t = buf(tag + "t", where.shape, np.float32)
        top = float(np.abs(v, out=t).max()) if v.size else 0.0
        if not top < 2.0 ** 41 / scale:  # (also NaN, inf)
            return False
        np.multiply(v, scale, out=t)  # (a power of two: exact)
        ints = buf(tag + "i", where.shape, np.int64)
        np.copyto(ints, t, casting="unsafe")  # (integers: exact)
        bits = int(np.bitwise_or.reduce(ints, axis=None))
        if bits:
            span *= top * scale / (bits & -bits)
        vals.append(v)
    if not span < 2.0 ** 52:
        return False
    # every partial sum below 2**24 units of 2**(la+lb): exact in float32 too, where a float32
    # accumulator's sum + C, rounded once in float32, is the float64 sum + C rounded to float32
    # (a float64 sum of two float32 values rounded again to float32 is their float32 sum: 53 >= 2*24 + 2)
    ft = np.float32 if span < 2.0 ** 24 and acc.name == "f32" else np.float64
    A = buf("A", (W, na * M, K), ft)
    B = buf("B", (W, nb * N, K), ft)
    np.copyto(A.reshape(W, na, M, K), vals[0].reshape(na, W, M, K).transpose(1, 0, 2, 3))
    np.copyto(B.reshape(W, nb, N, K), vals[1].reshape(nb, W, N, K).transpose(1, 0, 2, 3))
    R = np.matmul(A, B.transpose(0, 2, 1), out=buf("R", (W, na * M, nb * N), ft)).reshape(W, -1)
    R += 0.0  # an exact zero is +0.0, as einsum's sums (which start from +0.0) make it
    S = buf("S", (W,) + idx.shape, ft)  # each thread's sums, in C's order
    pairs = _pairs(idx) if ft is np.float32 else None
    if pairs is not None:  # sums in aligned pairs of neighbours (an m16n8 C tile's): gathered two at a time
        np.take(R.view(np.uint64), pairs, axis=1, out=S.view(np.uint64))
    else:
        np.take(R, idx, axis=1, out=S)
    S = S.reshape(n, -1)
    creg = b.regs[fc[0].id]
    if into is not None and cols is None and into is fc[0] and acc.name == "f32" and creg.dtype == np.float32:
        # D is the accumulator, in its column order: sum + C rounded once to float32 there
        np.add(S, creg, out=creg, casting="unsafe")
        return "into"
    C = to_real(creg if cols is None else creg[:, cols], acc)
    if ft is np.float32:
        D = S + C  # (f32: its storage)
    else:
        S += C  # + C in float64, then one rounding
        D = S.astype(np.float32) if acc.name == "f32" else from_real(S, acc)  # (f32: its storage)
    for o, at in zip(ops, outs):
        b.regs[o.d.id] = D[:, at]
    return True


_F16: List[Any] = []


def _f16_table() -> np.ndarray:
    """float32 of every f16 bit pattern, as numpy's cast makes it (a gather instead of the cast:
    the same bits, a few times faster)."""
    if not _F16:
        _F16.append(np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32))
    return _F16[0]


_PAIRS: Dict[int, Any] = {}  # id of an _exact_plan index -> (it, its pairs or None)


def _pairs(idx: np.ndarray) -> Any:
    """idx[:, 0::2] // 2 where idx (lanes, values) is pairs of neighbours, each starting at an even
    element (idx[:, 2j + 1] == idx[:, 2j] + 1): the pairs' numbers in the array seen as pairs.
    None otherwise."""
    got = _PAIRS.get(id(idx))
    if got is None or got[0] is not idx:
        p = None
        if idx.ndim == 2 and idx.shape[1] % 2 == 0:
            lo, hi = idx[:, 0::2], idx[:, 1::2]
            if not (lo % 2).any() and np.array_equal(hi, lo + 1):
                p = lo // 2
        if len(_PAIRS) > 256:
            _PAIRS.clear()
        got = _PAIRS[id(idx)] = (idx, p)
    return got[1]


class MmaSync(Op):
    """One warp-level MMA instruction: ``d = a * b + c`` over the 32 lanes of each warp.

    ``a``, ``b``, ``c`` are the lane's operand values (Refs, as many as the atom's value modes
    hold), ``d`` a fresh register array of the accumulator type."""

    __slots__ = ("op", "d", "a", "b", "c", "tv")

    def __init__(self, op: Any, d: Reg, a: Sequence[Any], b: Sequence[Any], c: Sequence[Any], tv: tuple):
        self.op, self.d = op, d
        self.a, self.b, self.c = tuple(a), tuple(b), tuple(c)
        self.tv = tv  # the atom's (A, B, C) TV layouts

    def __repr__(self) -> str:
        return f"{self.d!r} = {ptx_name(self.op)}(a[{len(self.a)}], b[{len(self.b)}], c[{len(self.c)}])"

    # ---- CPU
    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        from ..cpu.context import from_real, to_real

        op = self.op
        M, N, K = op.shape_mnk
        n = b.n
        W = n // 32
        active = b.whole_warps(mask, ptx_name(op), "mma.sync")
        ab, acc = op.ab_dtype, op.acc_dtype

        def vals(refs: tuple, dt: Any) -> np.ndarray:
            raw = b.matrix(refs, dt)
            v = to_real(raw, dt).astype(np.float64).reshape(W, 32, len(refs))
            return v if every else v[active]

        every = bool(active.all())
        A, B, C = vals(self.a, ab), vals(self.b, ab), vals(self.c, acc)
        w = A.shape[0]
        perm = self._perms(b.ir)
        if perm is not None:  # the TV layouts cover each tile once: the tiles are permutations of the lanes' values
            ia, ib, ic, oc = perm
            At = A.reshape(w, -1)[:, ia].reshape(w, M, K)
            Bt = B.reshape(w, -1)[:, ib].reshape(w, N, K)
            Ct = C.reshape(w, -1)[:, ic].reshape(w, M, N)
        else:
            (pa, qa), (pb, qb), (pc, qc) = (_tv_pq(t, P) for t, P in zip(self.tv, (M, N, M)))
            At = np.zeros((w, M, K))
            Bt = np.zeros((w, N, K))
            Ct = np.zeros((w, M, N))
            At[:, pa, qa] = A
            Bt[:, pb, qb] = B
            Ct[:, pc, qc] = C
        Dt = np.einsum("wmk,wnk->wmn", At, Bt) + Ct
        if acc.name == "f32":
            Dt = Dt.astype(np.float32)
        if perm is not None:
            D = Dt.reshape(w, M * N)[:, oc]
        else:
            D = Dt[:, pc, qc]
        if every:
            b.regs[self.d.id] = np.ascontiguousarray(from_real(D, acc)).reshape(n, self.d.n)
            return
        out = np.zeros((W, 32, self.d.n), dtype=acc.storage)
        out[active] = from_real(D, acc)
        b.regs[self.d.id] = out.reshape(n, self.d.n)

    def batch_key(self) -> Any:
        """Ops with equal keys may run together through ``interpret_batch`` (the CPU interpreter
        asks, for runs of them that do not read each other's results)."""
        return (MmaSync, id(self.op), tuple(id(t) for t in self.tv))

    def batch_io(self) -> Any:
        """(ids of the registers read, ids of the registers written)."""
        return {r[0].id for r in self.a + self.b + self.c if isinstance(r, tuple)}, {self.d.id}

    #: the CPU interpreter may hand interpret_batch an ``into`` register (see below)
    batch_into = "c"

    @staticmethod
    def interpret_batch(ops: Sequence["MmaSync"], b: Any, mask: Any, buffers: Any) -> Any:
        """Run independent MmaSyncs of one atom (one batch_key, none reading another's d) as one
        einsum over all their warps: each warp's tile is summed as ``interpret`` sums it (checked
        bit for bit by tests/kernel/test_tensorop_mma.py).

        ``ops.into`` (when the interpreter sets it: cpu/forward.py) is a mutable register into
        which the Assign right after the batch copies every op's D, each value to the element its
        C came from (``batch_into`` names that field): cute.gemm's accumulator. Returns "into"
        when D was written there (no D registers made; the Assign is not to be run), else None."""
        from ..cpu.context import from_real, to_real

        first = ops[0]
        perm = first._perms(b.ir)
        if perm is None:
            for o in ops:
                o.interpret(b, mask, buffers)
            return
        op = first.op
        M, N, K = op.shape_mnk
        n, W, k = b.n, b.n // 32, len(ops)
        active = b.whole_warps(mask, ptx_name(op), "mma.sync")
        every = bool(active.all())
        ab, acc = op.ab_dtype, op.acc_dtype
        ia, ib, ic, oc = perm

        nd = first.d.n
        cache = b.ir.__dict__.setdefault("_cpu_mma_flats", {})  # by the batch (the plan keeps it)
        got = cache.get(id(ops))
        if got is None or got[0] is not ops or got[1] != W:
            if len(cache) > 256:
                cache.clear()
            got = cache[id(ops)] = (ops, W, [_flat_gather(b, [getattr(o, f) for o in ops], dt, idx, W)
                                             for f, dt, idx in (("a", ab, ia), ("b", ab, ib), ("c", acc, ic))])
        flats = got[2]
        if every and all(f is not None for f in flats):  # each operand one gather of a register
            if ab.name in _EXACT_SCALE:
                done = _exact_batch(ops, b, flats, oc, M, N, K, getattr(ops, "into", None))
                if done:
                    return "into" if done == "into" else None
            D = np.empty((k, W, 32, nd), dtype=acc.storage)
            step = max(1, _TILES // k)  # warps at a time: tiles that stay in the CPU's caches
            for w0 in range(0, W, step):
                w1 = min(W, w0 + step)
                At, Bt, Ct = (_tiles(b, f, dt, w0, w1, P, Q) for f, dt, P, Q in
                              zip(flats, (ab, ab, acc), (M, N, M), (K, K, N)))
                Dt = np.einsum("wmk,wnk->wmn", At, Bt) + Ct
                if acc.name == "f32":
                    Dt = Dt.astype(np.float32)
                D[:, w0:w1] = from_real(Dt.reshape(k, w1 - w0, M * N)[:, :, oc], acc)
            for i, o in enumerate(ops):
                b.regs[o.d.id] = D[i].reshape(n, nd)
            return

        def tiles(refs: Any, dt: Any, idx: np.ndarray, P: int, Q: int) -> np.ndarray:
            raw = np.stack([b.matrix(r, dt) for r in refs])  # (ops, threads, values)
            raw = raw.reshape(k, W, 32 * raw.shape[2])
            if not every:
                raw = raw[:, active]
            raw = raw[:, :, idx]  # the tiles, then their values
            if dt.name == "f16":  # f16 to float64 at once (exact, as through float32)
                return raw.view(np.float16).astype(np.float64).reshape(-1, P, Q)
            return to_real(raw, dt).astype(np.float64).reshape(-1, P, Q)

        At = tiles([o.a for o in ops], ab, ia, M, K)
        Bt = tiles([o.b for o in ops], ab, ib, N, K)
        Ct = tiles([o.c for o in ops], acc, ic, M, N)
        Dt = np.einsum("wmk,wnk->wmn", At, Bt) + Ct
        if acc.name == "f32":
            Dt = Dt.astype(np.float32)
        D = from_real(Dt.reshape(k, -1, M * N)[:, :, oc], acc)  # (ops, warps, lanes, values)
        for i, o in enumerate(ops):
            if every:
                b.regs[o.d.id] = D[i].reshape(n, nd)
            else:
                out = np.zeros((W, 32, nd), dtype=acc.storage)
                out[active] = D[i]
                b.regs[o.d.id] = out.reshape(n, nd)

    def _perms(self, ir: Any) -> Any:
        """(A, B, C gathers, D's scatter as a gather) when the atom's TV layouts hold each element
        of the A, B and C tiles exactly once: a tile is then its warp's (lane, value)s in another
        order, one numpy gather. None otherwise. Cached on the kernel's IR."""
        cache = ir.__dict__.setdefault("_cpu_mma_perms", {})
        got = cache.get(id(self))
        if got is None or got[0] is not self:
            M, N, K = self.op.shape_mnk
            out = []
            for t, P, Q, n in zip(self.tv, (M, N, M), (K, K, N), (len(self.a), len(self.b), len(self.c))):
                p, q = _tv_pq(t, P)
                flat = (p * Q + q).reshape(-1)  # the tile element of each (lane, value), row-major tile
                if p.shape != (32, n) or sorted(flat.tolist()) != list(range(P * Q)):
                    out = None
                    break
                inv = np.empty(P * Q, dtype=np.intp)
                inv[flat] = np.arange(P * Q)
                out.append((inv, flat))
            plan = None if out is None else (out[0][0], out[1][0], out[2][0], out[2][1].reshape(32, -1))
            got = cache[id(self)] = (self, plan)
        return got[1]

    # ---- CUDA
    def cuda(self, r: Any) -> None:
        op = self.op
        ab, acc = op.ab_dtype, op.acc_dtype

        def packed(refs: tuple, dt: Any) -> List[str]:
            per = 32 // dt.width  # values per 32-bit register, the first in the lowest bits
            out = []
            for i in range(0, len(refs), per):
                vals = [f"((unsigned int)({r.stored(refs[i + j], dt)}){f' << {j * dt.width}' if j else ''})"
                        for j in range(per)]
                out.append("(" + " | ".join(vals) + ")")
            return out

        r.declare(self.d)
        d = r.reg(self.d)
        a, bb = packed(self.a, ab), packed(self.b, ab)
        t = r.fresh("mma")
        with r.braces():
            na, nb = len(a), len(bb)
            r.emit(f"const unsigned int {t}_a[{na}] = {{{', '.join(a)}}};")
            r.emit(f"const unsigned int {t}_b[{nb}] = {{{', '.join(bb)}}};")
            if acc.name == "f32":
                c = [r.value(x, acc) for x in self.c]
                nc = len(c)
                r.emit(f"const float {t}_c[{nc}] = {{{', '.join(c)}}};")
                outs = [f'"=f"({d}[{i}])' for i in range(nc)]
                ins_c = [f'"f"({t}_c[{i}])' for i in range(nc)]
            else:
                c = packed(self.c, acc)
                nc = len(c)
                r.emit(f"const unsigned int {t}_c[{nc}] = {{{', '.join(c)}}};")
                r.emit(f"unsigned int {t}_d[{nc}];")
                outs = [f'"=r"({t}_d[{i}])' for i in range(nc)]
                ins_c = [f'"r"({t}_c[{i}])' for i in range(nc)]
            k = 0

            def regs(m: int) -> str:
                nonlocal k
                s = "{" + ",".join(f"%{k + i}" for i in range(m)) + "}"
                k += m
                return s

            dreg = regs(nc)
            areg, breg, creg = regs(na), regs(nb), regs(nc)
            ins = [f'"r"({t}_a[{i}])' for i in range(na)] + [f'"r"({t}_b[{i}])' for i in range(nb)] + ins_c
            r.emit(f'asm volatile("{ptx_name(op)} {dreg}, {areg}, {breg}, {creg};\\n"')
            r.emit(f"    : {', '.join(outs)}")
            r.emit(f"    : {', '.join(ins)});")
            if acc.name != "f32":
                for i in range(nc):
                    r.emit(f"{d}[{2 * i}] = (unsigned short)({t}_d[{i}] & 0xffffu);")
                    r.emit(f"{d}[{2 * i + 1}] = (unsigned short)({t}_d[{i}] >> 16);")


# --------------------------------------------------------------------------- cute.gemm in a kernel

def _rank(t: Any) -> int:
    s = t.layout.shape
    return len(s) if isinstance(s, tuple) else 1


def _values(t: Any, crd: tuple, what: str, n: int) -> TraceValue:
    v = t[crd].load() if crd else t.load()
    if len(v.refs) != n:
        raise TraceError(f"cute.gemm: operand {what} has {len(v.refs)} values per atom, the atom takes {n}")
    return v


def mma_sync_gemm(mma: Any, d: Any, a: Any, b: Any, c: Any, dims: Any = None) -> None:
    """d = a * b + c inside a kernel over a TiledMma's (or MMA atom's) per-thread fragments.

    Ranks as cute.gemm dispatches them: (V) x (V) => (V); (V,M) x (V,N) => (V,M,N);
    (V,M,K) x (V,N,K) => (V,M,N). d may be c."""
    from ...nvgpu.mma_atom import MmaAtom, MmaOp, make_tiled_mma
    from ...nvgpu.warp.mma import MmaF16BF16Op, MmaFP8Op

    t = current("cute.gemm")
    tiled = mma if isinstance(mma, MmaAtom) else make_tiled_mma(mma) if isinstance(mma, MmaOp) else None
    if tiled is None:
        raise TraceError(f"kernel {t.name}: cute.gemm: expected an MMA atom, op or tiled MMA, got {type(mma).__name__}")
    op = _op_of(tiled)
    if not isinstance(op, (MmaF16BF16Op, MmaFP8Op)):
        raise TraceError(f"kernel {t.name}: cute.gemm with {type(op).__name__} is not supported inside cutelab "
                         f"kernels yet (warp.MmaF16BF16Op and warp.MmaFP8Op are){t.where()}")
    for what, x in (("a", a), ("b", b), ("c", c), ("d", d)):
        if getattr(x, "memspace", None) != "rmem":
            raise TraceError(f"kernel {t.name}: cute.gemm: operand {what} ({x}) must be a register fragment "
                             f"(make_fragment_{what.upper() if what != 'd' else 'C'}); {type(op).__name__} reads "
                             f"registers{t.where()}")
    ra, rb, rc, rd = _rank(a), _rank(b), _rank(c), _rank(d)
    if ra != rb or rc != rd:
        raise TraceError(f"kernel {t.name}: cute.gemm: a and b must have one rank, c and d one rank; got "
                         f"a {a.layout}, b {b.layout}, c {c.layout}, d {d.layout}")
    tv = (tiled.tv_layout_A, tiled.tv_layout_B, tiled.tv_layout_C) if not hasattr(tiled, "_atom") else \
        (tiled._atom.tv_layout_A, tiled._atom.tv_layout_B, tiled._atom.tv_layout_C)
    thr = tiled._atom.thr_id if hasattr(tiled, "_atom") else tiled.thr_id
    if it.product(thr.shape) != 32:
        raise TraceError(f"kernel {t.name}: cute.gemm: {type(op).__name__} must be a 32-thread warp atom, got thr_id {thr}")
    nv = [it.product(x.shape[1]) if isinstance(x.shape, tuple) else 1 for x in tv]
    if ra == 1 and rc == 1:
        M = N = K = 1
    elif ra == 2 and rc == 3:
        M, N, K = it.product(a.layout.shape[1]), it.product(b.layout.shape[1]), 1
    elif ra == 3 and rc == 3:
        M, N, K = (it.product(a.layout.shape[1]), it.product(b.layout.shape[1]), it.product(a.layout.shape[2]))
        if it.product(b.layout.shape[2]) != K:
            raise TraceError(f"kernel {t.name}: cute.gemm: a {a.layout} and b {b.layout} differ in K")
    else:
        raise TraceError(f"kernel {t.name}: cute.gemm: no dispatch for a of rank {ra} and c of rank {rc} "
                         f"(V x V => V, (V,M) x (V,N) => (V,M,N), (V,M,K) x (V,N,K) => (V,M,N))")
    if rc == 3 and (it.product(c.layout.shape[1]) != M or it.product(c.layout.shape[2]) != N):
        raise TraceError(f"kernel {t.name}: cute.gemm: c {c.layout} is not (V,{M},{N}) for a {a.layout} and b {b.layout}")

    def crd(x: Any, i: int, j: int, r: int) -> tuple:
        if r == 1:
            return ()
        if r == 2:
            return (None, i)
        return (None, i, j)

    acc_t = op.acc_dtype
    cur = {}  # (m, n) -> the latest D values
    for k in range(K):
        for m in range(M):
            for nn in range(N):
                n = nn if m % 2 == 0 else N - 1 - nn  # serpentine, as CuTe orders the atoms
                av = _values(a, crd(a, m, k, ra), "a", nv[0])
                bv = _values(b, crd(b, n, k, rb), "b", nv[1])
                cv = cur.get((m, n))
                if cv is None:
                    cv = _values(c, crd(c, m, n, rc), "c", nv[2])
                for x, dt, w in ((av, op.ab_dtype, "a"), (bv, op.ab_dtype, "b"), (cv, acc_t, "c")):
                    if x.dtype.name != dt.name:
                        raise TraceError(f"kernel {t.name}: cute.gemm: operand {w} holds {x.dtype}, "
                                         f"{type(op).__name__} takes {dt}{t.where()}")
                    t.check_refs(x.refs, "cute.gemm")
                dst = t.new_reg(acc_t, nv[2])
                t.emit(MmaSync(op, dst, av.refs, bv.refs, cv.refs, tv))
                cur[(m, n)] = TraceValue([(dst, i) for i in range(nv[2])], cv.shape, acc_t)
    for (m, n), v in cur.items():
        dd = d[crd(d, m, n, rd)] if rd > 1 else d
        dd.store(v)
