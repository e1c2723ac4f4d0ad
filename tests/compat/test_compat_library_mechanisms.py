"""What quack-kernels 0.5.3 needed of `cutelab run`, each on a small program of its own (no quack here):
custom-operator kernels on the emulated device, Triton's host utilities without Triton, fake-tensor
stand-ins, a dynamic grid extent compiled as 0, cutlass._mlir_helpers, calc_packed_f32x2_op,
FastDivmodDivisor's internals, a loop bound computed in the kernel, CuTe DSL's mismatch message."""
import importlib.util

import pytest
import torch
from compat_helpers import ok, run

emulated_only = pytest.mark.skipif(torch.cuda.is_available(), reason="a real GPU is here: nothing is emulated")


@emulated_only
def test_custom_op_cuda_kernels_run_for_cuda_tensors(tmp_path):
    out = ok(run(tmp_path, """
        import torch

        @torch.library.custom_op("cltest::double", mutates_args=(), device_types="cuda")
        def double(x: torch.Tensor) -> torch.Tensor:
            assert x.is_cuda  # the kernel sees the emulated device
            return x * 2

        @torch.library.custom_op("cltest::add_to", mutates_args={"out"})
        def add_to(x: torch.Tensor, out: torch.Tensor) -> None:
            assert x.is_cuda and out.is_cuda
            out.add_(x)

        x = torch.arange(4.0, device="cuda")
        y = double(x)
        print(y.tolist(), y.is_cuda)
        o = torch.zeros(4, device="cuda"); add_to(x, o); print(o.tolist())
        try:
            double(torch.arange(4.0))
        except NotImplementedError as e:
            print("cpu:", e)
    """))
    lines = out.splitlines()
    assert lines[0] == "[0.0, 2.0, 4.0, 6.0] True"
    assert lines[1] == "[0.0, 1.0, 2.0, 3.0]"
    assert lines[2].startswith("cpu: cltest::double: no kernel for 'cpu'")


@emulated_only
@pytest.mark.skipif(importlib.util.find_spec("triton") is not None, reason="Triton is installed: it is imported")
def test_triton_host_utilities_without_triton(tmp_path):
    out = ok(run(tmp_path, """
        import os, torch
        import triton
        from triton.testing import do_bench
        from triton.runtime.cache import FileCacheManager
        import torch.utils._triton as tt
        print(tt.has_triton_package())  # torch itself sees no Triton
        calls = []
        ms = do_bench(lambda: calls.append(1), warmup=1, rep=5)
        print(isinstance(ms, float) and ms >= 0, len(calls) >= 2, len(do_bench(lambda: None, quantiles=[0.5, 0.2])))
        os.environ["TRITON_CACHE_DIR"] = os.getcwd()
        c = FileCacheManager("k1")
        print(c.get_file("a.json"), os.path.basename(c.put('{"x": 1}', "a.json", binary=False)))
        print(open(c.get_file("a.json")).read())
        try:
            triton.jit
        except AttributeError as e:
            print("jit:", e)
    """))
    lines = out.splitlines()
    assert lines[0] == "False"
    assert lines[1] == "True True 2"
    assert lines[2] == "None a.json" and lines[3] == '{"x": 1}'
    assert lines[4].startswith("jit: module 'triton' has no attribute 'jit' in cutelab")


def test_plain_python_has_no_triton_stand_in(tmp_path):
    if importlib.util.find_spec("triton") is not None:
        pytest.skip("Triton is installed")
    out = run(tmp_path, "import triton\n", cutelab_run=False)
    assert out.returncode != 0 and "No module named 'triton'" in out.stderr


FAKE_PROGRAM = """
import torch
import cutlass
import cutlass.cute as cute
from cutlass import Int32

@cute.kernel
def k(mX: cute.Tensor, mO: cute.Tensor):
    bidx, _, _ = cute.arch.block_idx()
    tidx, _, _ = cute.arch.thread_idx()
    mO[bidx, tidx] = mX[bidx, tidx] + mX[bidx, tidx]

@cute.jit
def f(mX: cute.Tensor, mO: cute.Tensor, blocks: Int32):
    print(mX.element_type, mX.layout)
    k(mX, mO).launch(grid=[blocks, 1, 1], block=[mX.shape[1], 1, 1])

batch = cute.sym_int()
x = cute.runtime.make_fake_tensor(cutlass.BFloat16, (batch, 32), stride=(cute.sym_int64(divisibility=8), 1),
                                  assumed_align=16)
o = cute.runtime.make_fake_tensor(cutlass.BFloat16, (batch, 32), stride=(cute.sym_int64(divisibility=8), 1),
                                  assumed_align=16)
c = cute.compile(f, x, o, 0)  # 0 blocks at compile time, as quack passes sm_count
X = torch.randn(3, 32, device="cuda", dtype=torch.bfloat16); O = torch.zeros_like(X)
c(X, O, 3)
print(torch.equal(O, X + X))
try:
    c(X, O, 0)
except Exception as e:
    print("zero:", e)
try:
    c(X[:, :16], O[:, :16], 3)
except ValueError as e:
    print("mismatch:", e)
"""


def test_fake_tensor_stand_ins_and_a_grid_compiled_as_zero(tmp_path):
    out = ok(run(tmp_path, FAKE_PROGRAM)).splitlines()
    assert out[0] == "BFloat16 (?,32):(?{i64 div=8},1)"  # the fake's type; dynamic only where it is symbolic
    assert out[-3] == "True"
    assert "grid.x = 0; every grid dimension must be at least 1" in out[-2]
    assert "Mismatched mX.shape[1] on argument #0" in out[-1] and "shape[1] is 16, the fake's is 32" in out[-1]


def test_stand_in_strides_do_not_overlap():
    import cutelab as cute
    from cutelab.fake import make_fake_tensor, sym_int, sym_int64

    m, k, l = sym_int(), sym_int(), sym_int()
    f = make_fake_tensor(cute.Float16, (m, k, l), (sym_int64(divisibility=8), 1, sym_int64(divisibility=8)))
    shape, stride = f.stand_in_values({})
    assert shape == (8, 8, 8) and stride == (8, 1, 64)  # mode 0 after mode 1, mode 2 after both
    g = make_fake_tensor(cute.Float16, (m, 64, l), (sym_int64(divisibility=8), 1, sym_int64(divisibility=8)))
    assert g.stand_in_values({})[1] == (64, 1, 512)


KERNEL_HELPERS = """
import torch
import cutlass
import cutlass.cute as cute
from cutlass import Float32, Int32
from cutlass._mlir.dialects import nvvm
from cutlass._mlir_helpers import math as mlir_math

@cute.kernel
def k(mA: cute.Tensor, mO: cute.Tensor, n: Int32):
    tidx, _, _ = cute.arch.thread_idx()
    a = mA[tidx]
    r = mlir_math.rcp(a, approx=True, ftz=True)
    d = cute.arch.calc_packed_f32x2_op((a, a), (Float32(1.0), Float32(2.0)), None,
                                       calc_func=nvvm.sub_packed_f32x2)
    count = n * 2  # computed in the kernel: the loop bound is read at run time
    acc = Float32(0.0)
    for i in cutlass.range(count, unroll=1):
        acc = acc + a
    mO[tidx, 0] = r
    mO[tidx, 1] = d[0] + d[1]
    mO[tidx, 2] = acc

@cute.jit
def f(mA: cute.Tensor, mO: cute.Tensor, n: Int32):
    k(mA, mO, n).launch(grid=[1, 1, 1], block=[4, 1, 1])

A = torch.tensor([1.0, 2.0, 4.0, 8.0], device="cuda"); O = torch.zeros(4, 3, device="cuda")
f(A, O, 3)
print(O.tolist())
d = cute.FastDivmodDivisor(7, loc=None)
print(divmod(23, d), d._divisor, d._divisor_mlir)
"""


def test_mlir_helpers_packed_op_fast_divmod_and_a_kernel_loop_bound(tmp_path):
    out = ok(run(tmp_path, KERNEL_HELPERS)).splitlines()
    rows = eval(out[0])  # noqa: S307 - the program's own printout of a list of lists
    assert rows == [[1.0, -1.0, 6.0], [0.5, 1.0, 12.0], [0.25, 5.0, 24.0], [0.125, 13.0, 48.0]]
    assert out[1] == "(3, 2) 7 7"


BARRIERS = """
import torch, cutlass, cutlass.cute as cute
from cutlass import Int64

@cute.kernel
def k(g: cute.Tensor, guard: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    mbar = smem.allocate_array(Int64, num_elems=2)
    if guard:
        if tidx < 2:  # quack's reduction_base: one barrier per stage, initialised by the first threads
            cute.arch.mbarrier_init(mbar + tidx, 1)
    else:
        cute.arch.mbarrier_init(mbar + tidx, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    g[tidx] = 1.0

@cute.jit
def f(g: cute.Tensor, guard: cutlass.Constexpr):
    k(g, guard).launch(grid=[1, 1, 1], block=[32, 1, 1])

x = torch.zeros(32, device="cuda")
f(x, True)
print("guarded", x.sum().item())
try:
    f(x, False)
    print("unguarded ran")
except Exception as e:
    print("unguarded:", e)
"""


def test_runtime_barrier_index_under_a_branch(tmp_path):
    out = ok(run(tmp_path, BARRIERS)).splitlines()
    assert out[0] == "guarded 32.0"
    assert "barrier offset 0..31 is outside the 2 barriers" in out[1]


@emulated_only
def test_tensors_inside_dataclass_and_namedtuple_arguments_are_each_calls(tmp_path):
    # quack passes its GEMM epilogue's tensors (PostAct) in a dataclass, and a compiled function is called again
    # with other tensors of the same layouts. Each call's tensors inside a dataclass or a NamedTuple are the ones
    # its launches use (not the first call's: quack's second gemm_act wrote its postact into the first call's,
    # freed, memory, and left its own as torch.empty gave it: the NaNs of test_mlp after another test), for a
    # compile of real tensors and one of fake tensors called TVM-FFI style with torch tensors
    out = ok(run(tmp_path, """
        import dataclasses, typing
        import torch
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import from_dlpack

        class Src(typing.NamedTuple):
            a: cute.Tensor

        @dataclasses.dataclass
        class Outs:
            o: cute.Tensor

        @cute.kernel
        def twice(a: cute.Tensor, o: cute.Tensor):
            i, _, _ = cute.arch.thread_idx()
            o[i] = a[i] * 2.0

        @cute.jit
        def f(src: Src, outs: Outs):
            twice(src.a, outs.o).launch(grid=(1, 1, 1), block=(8, 1, 1))

        a1, o1 = torch.arange(8.0, device="cuda"), torch.zeros(8, device="cuda")
        a2, o2 = torch.arange(8.0, device="cuda") + 100, torch.zeros(8, device="cuda")
        c = cute.compile(f, Src(from_dlpack(a1)), Outs(from_dlpack(o1)))
        c(Src(from_dlpack(a1)), Outs(from_dlpack(o1)))
        c(Src(from_dlpack(a2)), Outs(from_dlpack(o2)))
        print(o1.tolist(), o2.tolist())

        fake = lambda: cute.runtime.make_fake_tensor(cutlass.Float32, (8,), stride=(1,), assumed_align=16)
        g = cute.compile(f, Src(fake()), Outs(fake()), options="--enable-tvm-ffi")
        o1.zero_(), o2.zero_()
        g(Src(a1), Outs(o1))
        g(Src(a2), Outs(o2))
        print(o1.tolist(), o2.tolist())
    """))
    first, second = [float(2 * i) for i in range(8)], [float(2 * (i + 100)) for i in range(8)]
    assert out.splitlines() == [f"{first} {second}"] * 2, out


@emulated_only
def test_a_call_of_a_fake_compile_keeps_the_fakes_symbolic_extents(tmp_path):
    # quack compiles on fake tensors with symbolic extents (cute.sym_int) and calls with real ones. The program a
    # call runs has a dynamic extent where the fake's is symbolic, as CuTe DSL's has: local_tile of a tile past the
    # extent (a grid rounded up to whole clusters: quack's symmetric GEMM at M = 128 under 2 x 128-row clusters)
    # keeps its coordinates past the end. Traced with the call's static extent, the rest mode of extent 1 has
    # stride 0 and block 1's tile aliased onto block 0's (its TMA stores clashed with block 0's)
    out = ok(run(tmp_path, """
        import torch
        import cutlass
        import cutlass.cute as cute

        @cute.kernel
        def mark(o: cute.Tensor):
            i, _, _ = cute.arch.thread_idx()
            b, _, _ = cute.arch.block_idx()
            c = cute.local_tile(cute.make_identity_tensor(o.shape), (64,), (b,))
            if c[i][0] < o.shape[0]:
                o[c[i]] = cutlass.Float32(b + 1)

        @cute.jit
        def f(o: cute.Tensor):
            mark(o).launch(grid=(2, 1, 1), block=(64, 1, 1))

        o = torch.zeros(64, device="cuda")
        g = cute.compile(f, cute.runtime.make_fake_tensor(cutlass.Float32, (cute.sym_int(),), stride=(1,),
                                                          assumed_align=16), options="--enable-tvm-ffi")
        g(o)
        print(sorted(set(o.tolist())))
    """))
    assert out.splitlines() == ["[1.0]"], out


@emulated_only
def test_a_constexpr_field_a_call_leaves_none_keeps_the_compiles_value(tmp_path):
    # quack compiles its GEMM epilogue arguments (a NamedTuple holding no fake tensor) with add_to_output=True,
    # a Constexpr field, and passes None there at each call, as CuTe DSL lets it (the compiled value stands).
    # Traced with the call's None, gemm_add_inplace's TMA reduce-add was a store: the output lost what it held
    out = ok(run(tmp_path, """
        import typing
        import torch
        import cutlass
        import cutlass.cute as cute

        class Opts(typing.NamedTuple):
            add: cutlass.Constexpr[bool] = False

        @cute.kernel
        def put(a: cute.Tensor, o: cute.Tensor, add: cutlass.Constexpr):
            i, _, _ = cute.arch.thread_idx()
            if cutlass.const_expr(add):
                o[i] = o[i] + a[i]
            else:
                o[i] = a[i]

        @cute.jit
        def f(a: cute.Tensor, o: cute.Tensor, opts: Opts):
            put(a, o, opts.add).launch(grid=(1, 1, 1), block=(8, 1, 1))

        fake = lambda: cute.runtime.make_fake_tensor(cutlass.Float32, (8,), stride=(1,), assumed_align=16)
        g = cute.compile(f, fake(), fake(), Opts(add=True), options="--enable-tvm-ffi")
        a, o = torch.ones(8, device="cuda"), torch.full((8,), 10.0, device="cuda")
        g(a, o, Opts(add=None))
        g(a, o, Opts(add=None))
        print(o.tolist())
    """))
    assert out.splitlines() == [str([12.0] * 8)], out
