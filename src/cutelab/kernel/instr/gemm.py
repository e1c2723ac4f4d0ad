"""``cute.gemm(tiled_mma, d, a, b, c)`` inside a traced kernel.

``kernel_gemm`` checks the operands and picks the implementation for the MMA op's type from
``GEMM_IMPLS`` (op class -> function(tiled_mma, d, a, b, c, shapes)), which ``register_gemm``
fills (this module registers the universal MMA and mma.sync, ``mma_sync.mma_sync_gemm``).

The universal MMA (``MmaUniversalOp``: one thread, a 1x1x1 atom) is one fused multiply-add per
(m, n, k) over the thread's fragments, as CuTe's gemm loops them: (V,M,K) x (V,N,K) => (V,M,N)
with k outermost, so each accumulator adds its products in k order. It is one ``Fma`` op per k
step: CUDA ``fmaf``/``fma`` (one rounding); the CPU computes a * b + c in float64 and rounds
once to the accumulator's type, which equals the fused result except in rare double-rounding
cases (within the accumulator's rounding).

>>> sorted(cls.__name__ for cls in GEMM_IMPLS)  # kernel/instr/mma_sync.py adds SM80 and SM89 mma.sync
['MmaF16BF16Op', 'MmaFP8Op', 'MmaUniversalOp']
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

import numpy as np

from ... import int_tuple as it
from ...errors import TraceError
from ..ir.nodes import Op
from ..frontend.engines import RmemEngine
from ..frontend.trace import TraceValue, current

__all__ = ["Fma", "kernel_gemm", "register_gemm", "GEMM_IMPLS"]

GEMM_IMPLS: Dict[type, Callable[..., None]] = {}


def register_gemm(op_type: type, fn: Callable[..., None]) -> None:
    """Make cute.gemm inside kernels use fn(tiled_mma, d, a, b, c, dims) for MMA ops of op_type;
    dims = (V, M, N, K) of the fragments (a: (V,M,K), b: (V,N,K), c and d: (V,M,N))."""
    GEMM_IMPLS[op_type] = fn


_ROWS = 1 << 15  # float64 elements of the FMA's scratch array (a quarter MB)
_COLS = 1 << 17  # the same for an outer product into a column-major accumulator (a MB)


class Fma(Op):
    """dst[i] = a[i] * b[i] + c[i], fused (one rounding), for the elements of a register array."""

    __slots__ = ("dst", "a", "b", "c")

    def __init__(self, dst: Any, a: Tuple[Any, ...], b: Tuple[Any, ...], c: Tuple[Any, ...]):
        self.dst, self.a, self.b, self.c = dst, tuple(a), tuple(b), tuple(c)

    def __repr__(self) -> str:
        return f"{self.dst!r} = fma(...{len(self.a)} elements)"

    #: the CPU interpreter may give this op a mutable register as ``dst`` (forwarding the
    #: ``Assign`` of all of its result into that register: kernel/cpu/forward.py); it then writes
    #: only the rows of the threads of the mask, as that Assign does
    into_mutable = True

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        from ..cpu.context import from_real

        d = self.dst
        plan = self._plan(b.ir)
        z = b.gather(self.c, d.dtype)
        if plan is None:  # every element's a * b + c: (threads, n) matrices
            x, y = b.gather(self.a, d.dtype), b.gather(self.b, d.dtype)
            p = np.multiply(x, y, dtype=np.float64)
            np.add(p, z, out=p)  # the sum in float64, then one rounding to d's type
            self._put(b, mask, p, 0, b.n)
            return
        # a[i] = A[i % M], b[i] = B[i // M]: the products as an outer product, (threads, N, M), made
        # and summed a block of rows at a time in a scratch array that stays in the CPU's caches
        M, a_m, b_n = plan
        if d.mutable and d.dtype.name in ("f32", "f64"):
            self._outer_into(b, mask, z, b.gather(a_m, d.dtype), b.gather(b_n, d.dtype), M)
            return
        x, y = b.gather(a_m, d.dtype).astype(np.float64), b.gather(b_n, d.dtype).astype(np.float64)
        rows = max(1, _ROWS // d.n)
        scratch = b.__dict__.get("_fma_scratch")
        if scratch is None or scratch.size < rows * d.n:
            scratch = b.__dict__["_fma_scratch"] = np.empty(rows * d.n)
        if not d.mutable:
            b.regs[d.id] = np.empty((b.n, d.n), dtype=d.dtype.storage)
        for i in range(0, b.n, rows):
            j = min(b.n, i + rows)
            p = scratch[:(j - i) * d.n].reshape(j - i, d.n)
            np.multiply(y[i:j, :, None], x[i:j, None, :], out=p.reshape(j - i, y.shape[1], M))
            np.add(p, z[i:j], out=p)  # the sum in float64, then one rounding to d's type
            self._put(b, mask if d.mutable else None, p, i, j)

    def _outer_into(self, b: Any, mask: Any, z: Any, x: Any, y: Any, M: int) -> None:
        """dst (a mutable f32/f64 register, cute.gemm's accumulator) = y[:, n] * x[:, m] + z[:, n * M
        + m], each sum in float64 rounded once to dst's type, for the threads of mask. The register
        is kept column-major (threads contiguous in each column: ``np.asfortranarray``, the same
        values), so that each numpy operation runs along the threads: the outer product is made as
        (n, m, threads), a float64 scratch array kept on the context."""
        d = self.dst
        acc = b.regs[d.id]
        if not acc.flags.f_contiguous:
            acc = np.asfortranarray(acc)
            if z is b.regs[d.id]:
                z = acc
            b.regs[d.id] = acc
        n, N = b.n, y.shape[1]
        step = max(1, min(n, _COLS // (N * M)))  # threads at a time: arrays that stay in the CPU's caches
        scratch = b.__dict__.get("_fma_outer")
        if scratch is None or scratch.size < (N * M + N + M) * step:
            scratch = b.__dict__["_fma_outer"] = np.empty((N * M + N + M) * step)
        for i in range(0, n, step):
            j = min(n, i + step)
            k = j - i
            q = scratch[:N * M * k].reshape(N, M, k)
            xt = scratch[N * M * k:(N * M + M) * k].reshape(M, k)
            yt = scratch[(N * M + M) * k:(N * M + M + N) * k].reshape(N, k)
            np.copyto(xt, x[i:j].T)  # (f32 to float64: exact)
            np.copyto(yt, y[i:j].T)
            np.multiply(yt[:, None, :], xt[None, :, :], out=q)  # the products (of f32 values: exact)
            q2 = q.reshape(N * M, k)
            np.add(q2, z[i:j].T, out=q2)  # the sum in float64, then one rounding to d's type
            if mask is None:
                np.copyto(acc[i:j].T, q2, casting="same_kind")
            else:
                np.copyto(acc[i:j].T, q2, casting="same_kind", where=mask[None, i:j])

    def _put(self, b: Any, mask: Any, p: Any, i: int, j: int) -> None:
        """Rows i..j of the result (float64 sums) into dst, rounded to its type: a fresh array's
        rows (dst made by this op), or a mutable register's, of the threads of mask."""
        from ..cpu.context import from_real

        d = self.dst
        if not d.mutable and (i, j) == (0, b.n):
            b.regs[d.id] = from_real(p, d.dtype)
            return
        out = b.regs[d.id][i:j]
        if mask is not None:
            m = mask[i:j]
            out[m] = from_real(p[m], d.dtype)
        elif d.dtype.name == "f32":
            np.copyto(out, p, casting="same_kind")
        else:
            out[:] = from_real(p, d.dtype)

    def _plan(self, ir: Any) -> Any:
        """(M, refs of A, refs of B) when a[i] is A[i % M] and b[i] is B[i // M] (cute.gemm's
        (m, n) loop: an outer product); None otherwise. Cached on the kernel's IR."""
        cache = ir.__dict__.setdefault("_cpu_fma_plans", {})
        got = cache.get(id(self))
        if got is None or got[0] is not self:
            a, bb, n = self.a, self.b, len(self.a)
            plan = None
            for M in range(1, n + 1):
                if n % M == 0 and all(a[i] == a[i % M] for i in range(n)) and all(
                        bb[i] == bb[i - i % M] for i in range(n)):
                    plan = (M, a[:M], bb[::M]) if M > 1 else None
                    break
            got = cache[id(self)] = (self, plan)
        return got[1]

    def cuda(self, r: Any) -> None:
        d = self.dst
        r.declare(d)
        fn = {"float": "fmaf", "double": "fma"}[r.ctype(d.dtype)[1]]
        for i in range(d.n):
            v = (f"{fn}({r.value(self.a[i], d.dtype)}, {r.value(self.b[i], d.dtype)}, "
                 f"{r.value(self.c[i], d.dtype)})")
            r.emit(f"{r.reg(d)}[{i}] = {r.to_storage(v, d.dtype)};")


def _modes(t: Any, what: str, rank: int) -> Tuple[int, ...]:
    shp = t.layout.shape
    flat = it.product_each(shp) if isinstance(shp, tuple) else (shp,)
    flat = flat if isinstance(flat, tuple) else (flat,)
    if len(flat) != rank:
        raise TraceError(f"cute.gemm: operand {what} {t} has rank {len(flat)}, expected {rank}")
    return tuple(int(x) for x in flat)


def kernel_gemm(atom: Any, d: Any, a: Any, b: Any, c: Any) -> None:
    """cute.gemm(tiled_mma, d, a, b, c) on register fragments inside a kernel."""
    from ...nvgpu.mma_atom import MmaAtom, TiledMma, make_tiled_mma

    t = current("cute.gemm")
    from .wgmma import kernel_gemm as wgmma_gemm  # SM90 warpgroup MMAs read A and B from shared memory

    if wgmma_gemm(atom, d, a, b, c):
        return None
    from .tcgen05_blockscaled import kernel_gemm as blockscaled_gemm  # SM100 block-scaled UMMA (scale factors in TMEM)
    from .tcgen05_mma import kernel_gemm as umma_gemm  # SM100 UMMA: smem descriptors, accumulator in TMEM

    if blockscaled_gemm(atom, d, a, b, c):
        return None
    if umma_gemm(atom, d, a, b, c):
        return None
    if isinstance(atom, TiledMma):
        tiled = atom
    elif isinstance(atom, MmaAtom):
        tiled = make_tiled_mma(atom)
    else:
        raise TraceError(f"kernel {t.name}: cute.gemm expects a TiledMma or MMA atom, got {type(atom).__name__}")
    for what, x in (("d", d), ("a", a), ("b", b), ("c", c)):
        if not isinstance(getattr(x, "engine", None), RmemEngine):
            raise TraceError(f"kernel {t.name}: cute.gemm operand {what} must be a register fragment "
                             f"(make_fragment_A/B/C, make_rmem_tensor), got {x}")
    ra = len(a.layout.shape) if isinstance(a.layout.shape, tuple) else 1
    rc = len(c.layout.shape) if isinstance(c.layout.shape, tuple) else 1
    if (ra, rc) not in ((2, 3), (3, 3)):
        raise TraceError(f"kernel {t.name}: cute.gemm inside a kernel takes (V,M[,K]) x (V,N[,K]) => (V,M,N) "
                         f"fragments; got a of rank {ra} and c of rank {rc}")
    va, M, *ka = _modes(a, "a", ra)
    vb, N, *kb = _modes(b, "b", ra)
    vc, Mc, Nc = _modes(c, "c", 3)
    vd, Md, Nd = _modes(d, "d", 3)
    K = ka[0] if ka else 1
    if (kb[0] if kb else 1) != K or (Mc, Nc) != (M, N) or (Md, Nd) != (M, N) or vc != vd:
        raise TraceError(f"kernel {t.name}: cute.gemm fragment shapes do not agree: a {a.layout.shape}, "
                         f"b {b.layout.shape}, c {c.layout.shape}, d {d.layout.shape}")
    impl = None
    for cls in type(tiled.op).__mro__:
        impl = GEMM_IMPLS.get(cls)
        if impl is not None:
            break
    if impl is None:
        raise TraceError(f"kernel {t.name}: cute.gemm with {tiled.op} inside a kernel is not supported by cutelab "
                         f"yet (supported: {', '.join(sorted(c.__name__ for c in GEMM_IMPLS))})")
    impl(tiled, d, a, b, c, (max(va, vb, vc), M, N, K))


def _universal(tiled: Any, d: Any, a: Any, b: Any, c: Any, dims: Tuple[int, int, int, int]) -> None:
    t = current("cute.gemm")
    V, M, N, K = dims
    if V != 1 or any(_modes(x, w, r)[0] != 1 for x, w, r in ((a, "a", len(a.layout.shape)),
                                                               (b, "b", len(b.layout.shape)), (c, "c", 3))):
        raise TraceError(f"kernel {t.name}: cute.gemm with MmaUniversalOp needs fragments with one value per "
                         f"atom (mode 0 of size 1), got a {a.layout.shape}, c {c.layout.shape}")
    dtype = d.element_type
    for what, x in (("a", a), ("b", b), ("c", c)):
        if x.element_type.name != dtype.name:
            raise TraceError(f"kernel {t.name}: cute.gemm with MmaUniversalOp({tiled.op.abacc_dtype}): operand "
                             f"{what} holds {x.element_type}, d holds {dtype}; A, B and C share one type")
    av, bv, cv = a.load(), b.load(), c.load()
    for v in (av, bv, cv):
        t.check_refs(v.refs, "cute.gemm")
    acc: List[Any] = list(cv.refs)  # index m + M * n (V = 1)
    for k in range(K):
        xs, ys, zs = [], [], []
        for n in range(N):
            for m in range(M):
                xs.append(av.refs[m + M * k])
                ys.append(bv.refs[n + N * k])
                zs.append(acc[m + M * n])
        dst = t.new_reg(dtype, M * N)
        t.emit(Fma(dst, tuple(xs), tuple(ys), tuple(zs)))
        acc = [(dst, i) for i in range(M * N)]
    d.store(TraceValue(acc, d.layout.shape, dtype))


def _register_defaults() -> None:
    from ...nvgpu.universal_mma import MmaUniversalOp
    from ...nvgpu.warp.mma import MmaF16BF16Op, MmaFP8Op
    from .mma_sync import mma_sync_gemm  # SM80 mma.sync (warp.MmaF16BF16Op, warp.MmaFP8Op)

    register_gemm(MmaUniversalOp, _universal)
    register_gemm(MmaF16BF16Op, mma_sync_gemm)
    register_gemm(MmaFP8Op, mma_sync_gemm)


_register_defaults()
