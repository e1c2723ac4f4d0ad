"""The PTX interpreter of inline assembly (kernel/instr/ptx.py), one family of instructions per
test, values checked against numpy; then inline_asm inside a kernel on the CPU and as printed
CUDA (asm volatile)."""

import numpy as np
import pytest

from cutelab.kernel.instr.ptx import Lanes, PtxError, parse

N = 64
L = Lanes(np.arange(N), (N, 1, 1))
rng = np.random.default_rng(7)


def f32bits(x):
    return np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)


def as_f32(u):
    return (np.asarray(u) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)


def u32(x):
    return np.asarray(x, np.int64).astype(np.uint32).astype(np.uint64)


def run(asm, cons, *ins):
    return parse(asm, cons).run(list(ins), L)


def test_f32_arithmetic():
    a, b, c = (rng.standard_normal(N).astype(np.float32) for _ in range(3))
    np.testing.assert_array_equal(as_f32(run("add.rn.f32 $0, $1, $2;", "=f,f,f", f32bits(a), f32bits(b))[0]), a + b)
    np.testing.assert_array_equal(as_f32(run("sub.f32 $0, $1, $2;", "=f,f,f", f32bits(a), f32bits(b))[0]), a - b)
    np.testing.assert_array_equal(as_f32(run("mul.rn.ftz.f32 $0, $1, $2;", "=f,f,f", f32bits(a), f32bits(b))[0]), a * b)
    want = (a.astype(np.float64) * b + c).astype(np.float32)
    np.testing.assert_array_equal(as_f32(run("fma.rn.f32 $0, $1, $2, $3;", "=f,f,f,f", *map(f32bits, (a, b, c)))[0]),
                                  want)
    got = as_f32(run("fma.rz.f32 $0, $1, $2, $3;", "=f,f,f,f", *map(f32bits, (a, b, c)))[0])
    exact = a.astype(np.float64) * b + c
    assert np.all(np.abs(got.astype(np.float64)) <= np.abs(exact))  # toward zero
    assert np.all(np.abs(got - want) <= np.spacing(np.abs(want)))
    np.testing.assert_array_equal(as_f32(run("min.f32 $0, $1, $2;", "=f,f,f", f32bits(a), f32bits(b))[0]),
                                  np.minimum(a, b))
    np.testing.assert_array_equal(as_f32(run("max.ftz.f32 $0, $1, $2;", "=f,f,f", f32bits(a), f32bits(b))[0]),
                                  np.maximum(a, b))
    nan = np.full(N, np.nan, np.float32)  # min/max return the number when one operand is NaN
    np.testing.assert_array_equal(as_f32(run("max.f32 $0, $1, $2;", "=f,f,f", f32bits(nan), f32bits(a))[0]), a)
    np.testing.assert_array_equal(as_f32(run("neg.f32 $0, $1;", "=f,f", f32bits(a))[0]), -a)


def test_f32x2_packed():
    a, b, c = (rng.standard_normal(2 * N).astype(np.float32) for _ in range(3))
    pa, pb, pc = (x.view(np.uint64) for x in (a, b, c))  # lane 0 in the low half, as the registers hold it
    for asm, want in (("add.rn.ftz.f32x2", a + b), ("sub.rn.f32x2", a - b), ("mul.rn.f32x2", a * b)):
        got = run(f"{asm} $0, $1, $2;", "=l,l,l", pa, pb)[0].view(np.float32)
        np.testing.assert_array_equal(got, want, err_msg=asm)
    got = run("fma.rn.ftz.f32x2 $0, $1, $2, $3;", "=l,l,l,l", pa, pb, pc)[0].view(np.float32)
    np.testing.assert_array_equal(got, (a.astype(np.float64) * b + c).astype(np.float32))


def test_half_packed_arithmetic():
    a, b = (rng.standard_normal(2 * N).astype(np.float16) for _ in range(2))
    pa, pb = (x.view(np.uint32).astype(np.uint64) for x in (a, b))
    got = run("mul.rn.f16x2 $0, $1, $2;", "=r,r,r", pa, pb)[0].astype(np.uint32).view(np.float16)
    np.testing.assert_array_equal(got, (a.astype(np.float64) * b).astype(np.float16))
    got = run("min.f16x2 $0, $1, $2;", "=r,r,r", pa, pb)[0].astype(np.uint32).view(np.float16)
    np.testing.assert_array_equal(got, np.minimum(a, b))


def bf16_to_f32(u16):
    return (np.asarray(u16, np.uint32) << 16).view(np.float32)


def test_cvt():
    x = (rng.standard_normal(N) * 100).astype(np.float32)
    h = run("cvt.rn.f16.f32 $0, $1;", "=h,f", f32bits(x))[0].astype(np.uint16).view(np.float16)
    np.testing.assert_array_equal(h, x.astype(np.float16))
    back = as_f32(run("cvt.f32.f16 $0, $1;", "=f,h", h.view(np.uint16).astype(np.uint64))[0])
    np.testing.assert_array_equal(back, h.astype(np.float32))
    # bf16: round to nearest even, and toward zero
    y = np.array([1.0, 1.00390625, 1.01171875, -1.01171875, 3.0e38, np.inf] * (N // 6) + [0.5] * (N % 6), np.float32)
    rn = run("cvt.rn.bf16.f32 $0, $1;", "=h,f", f32bits(y))[0]
    rz = run("cvt.rz.bf16.f32 $0, $1;", "=h,f", f32bits(y))[0]
    from cutelab.dtypes import to_storage
    from cutelab.numeric import BFloat16

    want_rn = np.asarray(to_storage(y, BFloat16)).view(np.uint16)  # cutelab's own bf16 rounding (nearest even)
    np.testing.assert_array_equal(rn.astype(np.uint16), want_rn)
    np.testing.assert_array_equal(bf16_to_f32(rn[:4]), np.array([1.0, 1.0, 1.015625, -1.015625], np.float32))
    np.testing.assert_array_equal(rz, f32bits(y) >> np.uint64(16))  # toward zero: the high half of the bits
    # packed: cvt.rn.bf16x2.f32 d, a, b puts a in the high half
    d = run("cvt.rn.bf16x2.f32 $0, $1, $2;", "=r,f,f", f32bits(np.full(N, 2.0)), f32bits(np.full(N, -0.5)))[0]
    assert int(d[0]) == (0x4000 << 16) | 0xBF00
    d = run("cvt.rz.satfinite.f16x2.f32 $0, $1, $2;", "=r,f,f", f32bits(np.full(N, 1e6)), f32bits(np.full(N, 1.0)))[0]
    assert int(d[0]) == (0x7BFF << 16) | 0x3C00  # satfinite: 65504, not inf
    # float -> int (saturating, NaN -> 0) and int -> float, ints widened
    z = np.array([1.5, -1.5, 2.5, 1e10, -1e10, np.nan] * (N // 6) + [0.0] * (N % 6), np.float32)
    assert _signed32(run("cvt.rni.s32.f32 $0, $1;", "=r,f", f32bits(z))[0][:6]) == [2, -2, 2, 2**31 - 1, -2**31, 0]
    assert _signed32(run("cvt.rzi.s32.f32 $0, $1;", "=r,f", f32bits(z))[0][:6]) == [1, -1, 2, 2**31 - 1, -2**31, 0]
    k = np.arange(N) - 30
    np.testing.assert_array_equal(as_f32(run("cvt.rn.f32.s32 $0, $1;", "=f,r", u32(k))[0]), k.astype(np.float32))
    assert int(run("cvt.u32.u8 $0, $1;", "=r,r", u32(np.full(N, 0x1FF)))[0][0]) == 0xFF
    assert int(run("cvt.s32.s8 $0, $1;", "=r,r", u32(np.full(N, 0x80)))[0][0]) == 0xFFFFFF80
    assert int(run("cvt.u64.u32 $0, $1;", "=l,r", u32(np.full(N, -1)))[0][0]) == 0xFFFFFFFF


def _signed32(u):
    return [int(np.int64(v) - (1 << 32) if v >= (1 << 31) else v) for v in np.asarray(u, np.int64)]


def test_integer_and_bit_ops():
    a = rng.integers(-2**31, 2**31, N)
    b = rng.integers(-2**31, 2**31, N)
    ua, ub = u32(a), u32(b)
    w = np.uint64(0xFFFFFFFF)
    assert np.array_equal(run("add.s32 $0, $1, $2;", "=r,r,r", ua, ub)[0], (ua + ub) & w)
    assert np.array_equal(run("sub.u32 $0, $1, $2;", "=r,r,r", ua, ub)[0], (ua - ub) & w)
    assert np.array_equal(run("mul.lo.u32 $0, $1, $2;", "=r,r,r", ua, ub)[0], (ua * ub) & w)
    assert np.array_equal(run("and.b32 $0, $1, $2;", "=r,r,r", ua, ub)[0], ua & ub)
    assert np.array_equal(run("or.b32 $0, $1, $2;", "=r,r,r", ua, ub)[0], ua | ub)
    assert np.array_equal(run("xor.b32 $0, $1, $2;", "=r,r,r", ua, ub)[0], ua ^ ub)
    assert np.array_equal(run("not.b32 $0, $1;", "=r,r", ua)[0], ~ua & w)
    assert np.array_equal(run("shl.b32 $0, $1, 5;", "=r,r", ua)[0], (ua << np.uint64(5)) & w)
    assert np.array_equal(run("shr.u32 $0, $1, 33;", "=r,r", ua)[0], np.zeros(N, np.uint64))  # past the width: 0
    assert _signed32(run("shr.s32 $0, $1, 4;", "=r,r", ua)[0]) == list(a >> 4)
    assert _signed32(run("min.s32 $0, $1, $2;", "=r,r,r", ua, ub)[0]) == list(np.minimum(a, b))
    assert np.array_equal(run("max.u32 $0, $1, $2;", "=r,r,r", ua, ub)[0], np.maximum(ua, ub))
    # lop3: (a & b) | c is the table 0xEA (0xF0 & 0xCC | 0xAA)
    c = u32(rng.integers(0, 2**32, N))
    assert np.array_equal(run("lop3.b32 $0, $1, $2, $3, 0xEA;", "=r,r,r,r", ua, ub, c)[0], (ua & ub) | c)
    assert np.array_equal(run("lop3.b32 $0, $1, $2, $3, 0x96;", "=r,r,r,r", ua, ub, c)[0], ua ^ ub ^ c)
    # mul.wide and mad.lo (quack's qtip: a 64-bit product from 32-bit halves)
    x = u32(rng.integers(0, 2**32, N))
    got = run("{.reg .b64 t; .reg .b32 tl, th; mul.wide.u32 t, $1, 2654435761; mov.b64 {tl, th}, t; "
              "mad.lo.s32 th, $1, 5, th; mov.b64 $0, {tl, th};}", "=l,r", x)[0]
    want = [(int(v) * (2654435761 + (5 << 32))) & (2**64 - 1) for v in x]
    assert [int(v) for v in got] == want


def test_prmt_and_mov_pack_unpack():
    a, b = u32(np.full(N, 0x11223344)), u32(np.full(N, 0x55667788))
    assert int(run("prmt.b32 $0, $1, $2, 0x5410;", "=r,r,r", a, b)[0][0]) == 0x77883344
    assert int(run("prmt.b32 $0, $1, $2, 0x0123;", "=r,r,r", a, b)[0][0]) == 0x44332211
    # selector 0xB: byte 3 of a (0x11) with its sign replicated (0x00); the other bytes byte 0 (0x44)
    assert int(run("prmt.b32 $0, $1, $2, 0x000B;", "=r,r,r", a, b)[0][0]) == 0x44444400
    assert int(run("prmt.b32 $0, $1, $2, 0x000F;", "=r,r,r", a, b)[0][0]) == 0x44444400  # b's byte 3: 0x55, + -> 0
    assert int(run("prmt.b32 $0, $1, $2, 0x000E;", "=r,r,r", a, u32(np.full(N, 0x00800000)))[0][0]) == 0x444444FF
    got = run("{.reg .b8 b0, b1, b2, b3; mov.b32 {b0, b1, b2, b3}, $1; mov.b32 $0, {b3, b2, b1, b0};}", "=r,r", a)[0]
    assert int(got[0]) == 0x44332211
    lo, hi = run("mov.b64 {$0, $1}, $2;", "=r,=r,l", np.full(N, 0x1122334455667788, np.uint64))
    assert (int(lo[0]), int(hi[0])) == (0x55667788, 0x11223344)
    assert int(run("{.reg .b32 t; mov.b64 {t, $0}, $1;}", "=r,l", np.full(N, 0xAABBCCDD00000001, np.uint64))[0][0]) \
        == 0xAABBCCDD
    assert int(run("mov.b32 $0, 0f3F800000;", "=f")[0][0]) == 0x3F800000
    assert int(run("", "=r,0", u32(np.full(N, 9)))[0][0]) == 9  # an empty program: the tied input


def test_setp_selp_predicates():
    a = rng.standard_normal(N).astype(np.float32)
    a[0] = np.nan
    b = np.zeros(N, np.float32)
    for cmp, f in (("lt", np.less), ("ge", np.greater_equal), ("ne", np.not_equal)):
        got = run(f"{{.reg .pred p; setp.{cmp}.f32 p, $1, $2; selp.u32 $0, 1, 0, p;}}", "=r,f,f",
                  f32bits(a), f32bits(b))[0]
        with np.errstate(invalid="ignore"):
            want = f(a, b) & ~np.isnan(a)  # ordered comparisons are false on NaN
        assert np.array_equal(got.astype(bool), want), cmp
    got = run("{.reg .pred p; setp.neu.f32 p, $1, $2; selp.u32 $0, 1, 0, p;}", "=r,f,f", f32bits(a), f32bits(b))[0]
    assert got[0] == 1  # unordered: true on NaN
    # predicated execution: @p / @!p
    k = u32(np.arange(N))
    got = run("{.reg .pred p; setp.lt.u32 p, $1, 10; mov.b32 $0, 7; @p add.u32 $0, $1, 100; @!p sub.u32 $0, $0, 1;}",
              "=r,r", k)[0]
    assert list(got[:12]) == [100 + i for i in range(10)] + [6, 6]
    # setp.f16x2 p|q: p from the low halves, q from the high halves (quack's two-predicate select)
    one, two = 0x3C00, 0x4000
    x = u32(np.full(N, (one << 16) | two))
    y = u32(np.full(N, (one << 16) | one))
    got = run("{.reg .pred p, q; .reg .f32 t;\nsetp.eq.f16x2 p|q, $1, $2;\nselp.f32 t, $3, $5, p;\n"
              "selp.f32 $0, $4, t, q;}", "=f,r,r,f,f,f", x, y, f32bits(np.full(N, 1.0)), f32bits(np.full(N, 2.0)),
              f32bits(np.full(N, 3.0)))[0]
    assert as_f32(got)[0] == 2.0  # q (high halves equal) selects $4


def test_transcendental_approximations():
    x = rng.uniform(-4, 4, N).astype(np.float32)
    got = as_f32(run("ex2.approx.ftz.f32 $0, $1;", "=f,f", f32bits(x))[0])
    np.testing.assert_allclose(got, np.exp2(x.astype(np.float64)), rtol=2e-7)
    got = as_f32(run("rcp.approx.f32 $0, $1;", "=f,f", f32bits(x))[0])
    np.testing.assert_allclose(got, 1.0 / x.astype(np.float64), rtol=2e-7)


def test_warp_shuffle_and_reduction():
    v = u32(np.arange(N) * 3)
    lane = np.arange(N) % 32
    got = run("shfl.sync.bfly.b32 $0, $1, 4, 0x1f, 0xffffffff;", "=r,r", v)[0]
    assert np.array_equal(got, u32((np.arange(N) ^ 4) * 3))
    got = run("shfl.sync.down.b32 $0, $1, 3, 0x1f, 0xffffffff;", "=r,r", v)[0]
    src = np.where(lane + 3 <= 31, np.arange(N) + 3, np.arange(N))
    assert np.array_equal(got, u32(src * 3))
    got = run("shfl.sync.up.b32 $0, $1, 1, 0x0, 0xffffffff;", "=r,r", v)[0]
    src = np.where(lane >= 1, np.arange(N) - 1, np.arange(N))
    assert np.array_equal(got, u32(src * 3))
    got = run("shfl.sync.idx.b32 $0, $1, 5, 0x1f, 0xffffffff;", "=r,r", v)[0]
    assert np.array_equal(got, u32((np.arange(N) - lane + 5) * 3))
    got = run("shfl.sync.idx.b32 $0, $1, 1, 0x181f, 0xffffffff;", "=r,r", v)[0]  # segments of 8 lanes
    assert np.array_equal(got, u32((np.arange(N) - lane % 8 + 1) * 3))
    got = run("redux.sync.add.u32 $0, $1, 0xffffffff;", "=r,r", v)[0]
    sums = (np.arange(N) * 3).reshape(2, 32).sum(1)
    assert np.array_equal(got, u32(np.repeat(sums, 32)))
    w = rng.integers(-1000, 1000, N)
    got = run("redux.sync.min.s32 $0, $1, 0xffffffff;", "=r,r", u32(w))[0]
    assert _signed32(got) == list(np.repeat(w.reshape(2, 32).min(1), 32))
    got = run("redux.sync.xor.b32 $0, $1, 0xffffffff;", "=r,r", u32(w))[0]
    assert np.array_equal(got, np.repeat(np.bitwise_xor.reduce(u32(w).reshape(2, 32), axis=1), 32))
    got = run("{.reg .b32 t; mov.u32 t, %laneid; add.u32 $0, t, %warpid;}", "=r")[0]
    assert np.array_equal(got, u32(lane + np.arange(N) // 32))


@pytest.mark.parametrize("asm, what", [
    ("ld.global.v4.f32 {$0, $1, $2, $3}, [$4];", "memory operand"),
    ("bar.sync 0;", "PTX instruction 'bar.sync'"),
    ("mapa.shared::cluster.u32 $0, $1, $2;", "PTX instruction 'mapa.shared::cluster.u32'"),
    ("cvt.rn.bf16x2.e2m1x2 $0, $1;", "fp4/fp6/fp8"),
    ("L1: bra L1;", "label 'L1'"),
])
def test_other_instructions_are_named(asm, what):
    with pytest.raises(PtxError, match=__import__("re").escape(what)):
        parse(asm, "=r,r").run([np.zeros(N, np.uint64)], L)


def test_undeclared_register_is_named():
    with pytest.raises(PtxError, match="register 't' is not declared"):
        run("mov.b32 $0, t;", "=r")


# --------------------------------------------------------------------------- in a kernel

def test_inline_asm_in_a_kernel_on_the_cpu_and_as_cuda():
    import cutelab as cute
    from cutelab.compat.cutlass_dsl import T
    from cutelab.compat.mlir import ir
    from cutelab.compat.mlir.dialects import llvm
    from cutelab.kernel.cuda.printer import CudaRenderer
    from cutelab.kernel.launch.plan import capture
    from cutelab.runtime import from_dlpack

    @cute.kernel
    def k(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor, gD: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        v = gA[tidx]
        gB[tidx] = llvm.inline_asm(T.f32(), [v, v], "{.reg .f32 t; fma.rn.f32 t, $1, $2, $1; mul.f32 $0, t, 2.0;}",
                                   "=f,f,f")
        gC[tidx] = llvm.inline_asm(T.i32(), [tidx], "redux.sync.add.s32 $0, $1, 0xffffffff;", "=r,r")
        lo, hi = llvm.inline_asm(ir.Type.parse("!llvm.struct<(i32, i32)>"), [v], "{.reg .b32 t; mov.b32 t, $2; mov.b32 $0, t; "
                                 "shr.u32 $1, t, 16;}", "=r,=r,f")
        gD[tidx] = llvm.extractvalue(T.i32(), (lo, hi), [1])

    a = np.random.default_rng(1).random(64, dtype=np.float32)
    b, c, d = np.zeros(64, np.float32), np.zeros(64, np.int32), np.zeros(64, np.int32)
    k(from_dlpack(a), from_dlpack(b), from_dlpack(c), from_dlpack(d)).launch(grid=(1, 1, 1), block=(64, 1, 1))
    np.testing.assert_array_equal(b, ((a.astype(np.float64) * a + a).astype(np.float32) * 2))
    np.testing.assert_array_equal(c, np.repeat([496, 1520], 32))
    np.testing.assert_array_equal(d, a.view(np.uint32) >> 16)
    with capture() as ks:
        k(from_dlpack(a), from_dlpack(b), from_dlpack(c), from_dlpack(d)).launch(grid=(1, 1, 1), block=(64, 1, 1))
    src = CudaRenderer(ks[0]).render()
    assert 'asm volatile("{.reg .f32 t; fma.rn.f32 t, %1, %2, %1; mul.f32 %0, t, 2.0;}" : "=f"(' in src
    assert 'asm volatile("redux.sync.add.s32 %0, %1, 0xffffffff;" : "=r"(' in src
    assert '"=r"(asm_o' in src and ', "=r"(asm_o' in src  # two outputs


def test_bar_sync_is_the_block_barrier():
    import cutelab as cute
    from cutelab.compat.mlir.dialects import llvm
    from cutelab.compat.where import NotEmulatedError
    from cutelab.kernel.cuda.printer import CudaRenderer
    from cutelab.kernel.ir.nodes import Barrier
    from cutelab.kernel.launch.plan import capture
    from cutelab.runtime import from_dlpack

    @cute.kernel
    def k(gA: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        llvm.inline_asm(None, [], "bar.sync 0;", "", has_side_effects=True)
        gA[tidx] = 1.0

    @cute.kernel
    def named(gA: cute.Tensor):
        llvm.inline_asm(None, [], "bar.sync 1, 64;", "", has_side_effects=True)

    with capture() as ks:
        k(from_dlpack(np.zeros(64, np.float32))).launch(grid=(1, 1, 1), block=(64, 1, 1))
    assert any(isinstance(s, Barrier) for s in ks[0].body.ops)
    assert "__syncthreads();" in CudaRenderer(ks[0]).render()
    with pytest.raises(NotEmulatedError, match=r"PTX instruction 'bar.sync' \(llvm.inline_asm\).*named barriers"):
        named(from_dlpack(np.zeros(64, np.float32))).launch(grid=(1, 1, 1), block=(64, 1, 1))


def test_inline_ptx_named_operands():
    import cutelab as cute
    from cutelab.compat.dsl_names import ARCH_EXTRAS
    from cutelab.numeric import Float32, Int32
    from cutelab.runtime import from_dlpack

    inline_ptx = ARCH_EXTRAS["inline_ptx"]

    @cute.kernel
    def k(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        v = gA[tidx]
        gB[tidx] = inline_ptx("ex2.approx.ftz.f32 {$w0}, {$r0};", write_only_types=[Float32], read_only_args=[v])
        m, acc = inline_ptx("max.s32 {$w0}, {$r0}, {$r1}; add.s32 {$rw0}, {$rw0}, {$r1};",
                            write_only_types=[Int32], read_only_args=[tidx, 20], read_write_args=[tidx])
        gC[tidx] = m * 1000 + acc

    a = np.linspace(-2, 2, 32, dtype=np.float32)
    b, c = np.zeros(32, np.float32), np.zeros(32, np.int32)
    k(from_dlpack(a), from_dlpack(b), from_dlpack(c)).launch(grid=(1, 1, 1), block=(32, 1, 1))
    np.testing.assert_allclose(b, np.exp2(a.astype(np.float64)), rtol=2e-7)
    t = np.arange(32)
    np.testing.assert_array_equal(c, np.maximum(t, 20) * 1000 + t + 20)


def _asm_mix_kernel():
    import cutelab as cute
    from cutelab.compat.cutlass_dsl import T
    from cutelab.compat.mlir import ir
    from cutelab.compat.mlir.dialects import llvm

    @cute.kernel
    def k(gA: cute.Tensor, gF: cute.Tensor, gI: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        v = gA[tidx]
        gF[tidx, 0] = llvm.inline_asm(T.f32(), [v, v], "{.reg .f32 t; fma.rn.f32 t, $1, $2, $1; mul.f32 $0, t, 2.0;}",
                                      "=f,f,f")
        gF[tidx, 1] = llvm.inline_asm(T.f32(), [v], "ex2.approx.ftz.f32 $0, $1;", "=f,f")
        gI[tidx, 0] = llvm.inline_asm(T.i32(), [tidx], "redux.sync.add.s32 $0, $1, 0xffffffff;", "=r,r")
        gI[tidx, 1] = llvm.inline_asm(T.i32(), [v, v], "cvt.rn.bf16x2.f32 $0, $1, $2;", "=r,f,f")
        gI[tidx, 2] = llvm.inline_asm(T.i32(), [tidx], "{.reg .b32 t; mov.u32 t, %tid.x; "
                                      "lop3.b32 $0, t, $1, 0x5A5A5A5A, 0x96;}", "=r,r")
        gI[tidx, 3] = llvm.inline_asm(T.i32(), [tidx], "shfl.sync.bfly.b32 $0, $1, 3, 0x1f, 0xffffffff;", "=r,r")
        gI[tidx, 4] = llvm.inline_asm(T.i32(), [tidx, 0x55667788], "prmt.b32 $0, $1, $2, 0x5410;", "=r,r,r")
        lo, hi = llvm.inline_asm(ir.Type.parse("!llvm.struct<(i32, i32)>"), [tidx],
                                 "{.reg .b64 w; mul.wide.u32 w, $2, 2654435761; mov.b64 {$0, $1}, w;}", "=r,=r,r")
        gI[tidx, 5] = llvm.extractvalue(T.i32(), (lo, hi), [0])
        gI[tidx, 6] = llvm.extractvalue(T.i32(), (lo, hi), [1])
        gI[tidx, 7] = llvm.inline_asm(T.i32(), [v], "{.reg .pred p; setp.gt.f32 p, $1, 0f3F000000; "
                                      "selp.s32 $0, 7, -7, p;}", "=r,f")

    return k


def _run_mix(k, a, F, I):
    from cutelab.runtime import from_dlpack

    k(from_dlpack(a), from_dlpack(F), from_dlpack(I)).launch(grid=(1, 1, 1), block=(64, 1, 1))


def test_inline_asm_mix_on_the_cpu():
    a = np.random.default_rng(3).random(64, dtype=np.float32)
    F, I = np.zeros((64, 2), np.float32), np.zeros((64, 8), np.int32)
    _run_mix(_asm_mix_kernel(), a, F, I)
    t = np.arange(64)
    np.testing.assert_array_equal(F[:, 0], (a.astype(np.float64) * a + a).astype(np.float32) * 2)
    np.testing.assert_allclose(F[:, 1], np.exp2(a.astype(np.float64)), rtol=2e-7)
    np.testing.assert_array_equal(I[:, 0], np.repeat([496, 1520], 32))
    np.testing.assert_array_equal(I[:, 2], (t ^ t ^ 0x5A5A5A5A))
    np.testing.assert_array_equal(I[:, 3], t ^ 3)
    np.testing.assert_array_equal(I[:, 4].view(np.uint32), ((0x7788 << 16) | (t & 0xFFFF)).astype(np.uint32))
    w = t.astype(np.uint64) * np.uint64(2654435761)
    np.testing.assert_array_equal(I[:, 5].view(np.uint32), (w & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    np.testing.assert_array_equal(I[:, 6].view(np.uint32), (w >> np.uint64(32)).astype(np.uint32))
    np.testing.assert_array_equal(I[:, 7], np.where(a > 0.5, 7, -7))


@pytest.mark.gpu
def test_inline_asm_mix_on_the_gpu_equals_the_interpreter():
    """The same kernel as asm volatile on the GPU and in the PTX interpreter: every integer
    result bit for bit, floats exact but the approximate ex2 (within 2 ulp)."""
    import torch

    k = _asm_mix_kernel()
    a = np.random.default_rng(3).random(64, dtype=np.float32)
    F, I = np.zeros((64, 2), np.float32), np.zeros((64, 8), np.int32)
    _run_mix(k, a, F, I)
    ga = torch.from_numpy(a).cuda()
    gF, gI = torch.zeros((64, 2), device="cuda"), torch.zeros((64, 8), dtype=torch.int32, device="cuda")
    _run_mix(k, ga, gF, gI)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(gI.cpu().numpy(), I)
    np.testing.assert_array_equal(gF.cpu().numpy()[:, 0], F[:, 0])
    np.testing.assert_allclose(gF.cpu().numpy()[:, 1], F[:, 1], rtol=3e-7)
