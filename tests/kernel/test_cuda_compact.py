"""The CUDA printer's compact forms (cuda._Shared, CudaRenderer.copy): an index sum that reads no
register is declared once per C scope and the accesses add their constants to it; a run of register
elements copied from another register array is one assignment of a cl_vals. The printed kernels
are run on the host (g++, each thread in turn) and compared with the CPU interpreter, and
compiled with nvcc."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import capture
from cutelab.runtime import from_dlpack

GXX = shutil.which("g++")
NVCC = shutil.which("nvcc")


@cute.kernel
def sums_kernel(gA: cute.Tensor, gB: cute.Tensor, n: cutlass.Int32, d: cutlass.Int32):
    """The same sum in a runtime branch (its own scope), then after it (declared again), with a
    runtime divisor (cl_floordiv / cl_mod of a scalar argument)."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    base = (tidx % 8) * 4 + (tidx // 8) * 64 + bidx * 256
    if tidx < n:
        gB[base + 1] = gA[base + 1] + 1.0
    for i in range(3):
        gB[base + 16 * i + 2] = gA[base + 16 * i + 2] * 2.0
    q = (tidx + bidx * 32) // d
    r = (tidx + bidx * 32) % d
    gB[base + 3] = gA[(r * 4 + q * 8) % 1000 + 3]
    gB[base + 35] = gA[(r * 4 + q * 8) % 1000 + 7]


@cute.kernel
def runs_kernel(gA: cute.Tensor, gB: cute.Tensor, n: cutlass.Int32):
    """A fragment carried by a runtime loop: read (a mov of 8 elements) and written back (an
    Assign of 8 elements) each iteration."""
    tidx, _, _ = cute.arch.thread_idx()
    acc = cute.make_rmem_tensor(cute.make_layout(8), cutlass.Float32)
    for i in range(8):
        acc[i] = gA[tidx * 8 + i]
    for t in cutlass.range(n):
        v = acc.load()
        acc.store(v * 2.0 + 1.0)
    for i in range(8):
        gB[tidx * 8 + i] = acc[i]


def _inputs(n=1024):
    A = (np.arange(n, dtype=np.float32) % 97) - 40
    return A, np.zeros(n, np.float32)


def _traced(kernel, args, grid, block):
    A, B = _inputs()
    with capture() as ks:
        kernel(from_dlpack(A), from_dlpack(B), *args).launch(grid=grid, block=block, interpret=True)
    return ks[0]


def _cpu(kernel, args, grid, block):
    A, B = _inputs()
    kernel(from_dlpack(A), from_dlpack(B), *args).launch(grid=grid, block=block, interpret=True)
    return B


def _body(src: str) -> str:
    return src[src.index("extern \"C\" __global__"):]


def test_sums_are_declared_once_per_scope():
    src = _body(cuda.render(_traced(sums_kernel, (7, 3), 4, 32)))
    sums = re.findall(r"const unsigned int (ix\d+) = \(4u \* \(\(\(unsigned int\)threadIdx.x\) % 8u\)", src)
    assert len(sums) == 2, src  # once in the branch, once after it (the branch's local is out of scope)
    inner, outer = sums
    branch = src[src.index("if ("):src.index("}")]
    after = src[src.index("}"):]

    def uses(name: str, text: str) -> bool:
        return re.search(rf"\b{name}\b", text) is not None

    assert uses(inner, branch) and not uses(outer, branch)
    assert not uses(inner, after)
    assert len(re.findall(rf"= \({outer} \+ \d+u\);", after)) >= 6  # the loop's loads and stores, one sum
    # the divisions by the runtime d: computed once, at the kernel's entry, in 32 bits (the operands'
    # ranges fit), for the two loads that use them
    assert src.count("cl_floordiv32(") == 1 and src.count("cl_mod32(") == 1 and "cl_floordiv(" not in src
    entry = src[src.index("{"):src.index("if (")]
    assert re.search(r"const int hd\d+ = \(\(int\)cl_floordiv32\(", entry), entry


def test_register_runs_copy_as_one_value():
    src = cuda.render(_traced(runs_kernel, (3,), 1, 32))
    assert "template <int N, typename T> struct cl_vals { T v[N]; };" in src
    body = _body(src)
    assert len(re.findall(r"\*reinterpret_cast<cl_vals<8, float>\*>\(&r\d+\[0\]\) = "
                          r"\*reinterpret_cast<const cl_vals<8, float>\*>\(&r\d+\[0\]\);", body)) == 2
    plain = cuda.render(_traced(sums_kernel, (7, 3), 4, 32))
    assert "cl_vals" not in plain  # declared only where used


# --------------------------------------------------------------------------- the printed code, run on the host

_HOST = r"""
#include <cmath>
#include <cstdio>
#include <cstring>
struct cl_dim3 { unsigned int x, y, z; };
static cl_dim3 threadIdx, blockIdx;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
template <typename T> static T __ldg(const T* p) { return *p; }
// lane 0's value: the printer broadcasts only warp-uniform values (passes/uniform.py), the same in every lane
template <typename T> static T __shfl_sync(unsigned int, T v, int) { return v; }
static long long cl_floordiv(long long a, long long b) { long long q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }
static long long cl_mod(long long a, long long b) { long long r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
static int cl_floordiv32(int a, int b) { int q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }
static int cl_mod32(int a, int b) { int r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
"""


def _run_on_host(src: str, name: str, extra_args: str, grid: int, block: int, tmp_path) -> np.ndarray:
    """Compile the printed kernel (without its device prelude) as host C++ and run every thread of
    every block in turn (the kernels here have no barriers); returns B."""
    kernel = src[src.index("// grid"):]
    if "struct cl_vals" in src:
        kernel = "template <int N, typename T> struct cl_vals { T v[N]; };\n" + kernel
    A, B = _inputs()
    main = f"""
int main() {{
  static float A[{A.size}], B[{B.size}];
  for (int i = 0; i < {A.size}; ++i) A[i] = (float)((i % 97) - 40);
  for (unsigned int b = 0; b < {grid}; ++b)
    for (unsigned int t = 0; t < {block}; ++t) {{
      blockIdx = cl_dim3{{b, 0, 0}}; threadIdx = cl_dim3{{t, 0, 0}};
      {name}(A, B{extra_args});
    }}
  for (int i = 0; i < {B.size}; ++i) printf("%.9g\\n", B[i]);
}}
"""
    cpp = tmp_path / f"{name}.cpp"
    cpp.write_text(_HOST + kernel + main)
    exe = tmp_path / name
    c = subprocess.run([GXX, "-std=c++17", "-O1", "-fno-strict-aliasing", "-o", str(exe), str(cpp)],
                       capture_output=True, text=True, timeout=300)
    assert c.returncode == 0, c.stderr[-3000:]
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    return np.array([float(x) for x in out.stdout.split()], np.float32)


@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
@pytest.mark.parametrize("kernel,args,grid,block,extra", [
    (sums_kernel, (7, 3), 4, 32, ", 7, 3"),
    (sums_kernel, (32, 5), 4, 32, ", 32, 5"),
    (runs_kernel, (3,), 1, 32, ", 3"),
], ids=["sums", "sums-all-threads", "runs"])
def test_printed_kernel_computes_what_the_interpreter_does(kernel, args, grid, block, extra, tmp_path):
    ir = _traced(kernel, args, grid, block)
    src = cuda.render(ir)
    got = _run_on_host(src, ir.name, extra, grid, block, tmp_path)
    np.testing.assert_array_equal(got, _cpu(kernel, args, grid, block))


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_compact_forms_compile_with_nvcc(tmp_path):
    for kernel, args, grid in ((sums_kernel, (7, 3), 4), (runs_kernel, (3,), 1)):
        f = tmp_path / "k.cu"
        f.write_text(cuda.render(_traced(kernel, args, grid, 32)))
        r = subprocess.run([NVCC, "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(f)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]


# --------------------------------------------------------------------------- f16 / bf16 constants

@pytest.mark.parametrize("name", ["f16", "bf16"])
def test_half_constants_are_printed_as_their_bits(name):
    torch = pytest.importorskip("torch")
    tdt = torch.float16 if name == "f16" else torch.bfloat16
    vals = [0.0, -0.0, 1.0, -2.5, 0.5, 3.140625, 2.0 ** -24, 2.0 ** -25, 65504.0, 65519.0, 65520.0, 1e10,
            1.00390625, 1.01171875, 1.0 + 2.0 ** -23]
    for v in vals:
        want = int(torch.tensor(v, dtype=torch.float32).to(tdt).view(torch.int16).item()) & 0xFFFF
        assert cuda.half_bits(v, name) == want, v
    for v in (0.1, 1e-5, float("inf"), float("nan"), 3e38):  # not exactly a float32, or not finite
        assert cuda.half_bits(v, name) is None


@cute.kernel
def fill_kernel(gH: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    frg = cute.make_rmem_tensor(cute.make_layout(8), cutlass.Float16)
    frg.fill(1.5)
    frg[3] = cutlass.Float16(0.1)
    for i in range(8):
        gH[tidx * 8 + i] = frg[i]


def test_half_fill_prints_bits():
    H = np.zeros(256, np.float16)
    with capture() as ks:
        fill_kernel(from_dlpack(H)).launch(grid=1, block=32, interpret=True)
    body = _body(cuda.render(ks[0]))
    assert "cl_f32_to_f16(1.5f)" not in body and "(unsigned short)0x3e00u" in body
    assert "(unsigned short)0x2e66u" in body  # Float16(0.1): the tracer rounds it, the printer prints its bits
    assert "cl_f32_to_f16(" not in body
    fill_kernel(from_dlpack(H)).launch(grid=1, block=32, interpret=True)
    assert H[0] == np.float16(1.5) and H[3] == np.float16(np.float32(0.1))


@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
def test_consecutive_assigns_to_one_array_copy_as_one_value(tmp_path):
    """Element-wise Assigns in a row (as tensorop_gemm's ldmatrix results into its A/B fragments)
    are printed together: their run is one cl_vals copy, and the kernel computes the same."""
    from cutelab.kernel.ir.nodes import Assign, For, walk

    ir = _traced(runs_kernel, (3,), 1, 32)
    loop = next(op for op in walk(ir.body) if isinstance(op, For))
    ops = loop.body.ops
    k = next(i for i, op in enumerate(ops) if isinstance(op, Assign) and len(op.index) == 8)
    a = ops[k]
    ops[k:k + 1] = [Assign(a.dst, (j,), (ref,)) for j, ref in zip(a.index, a.src)]
    src = cuda.render(ir)
    assert len(re.findall(r"= \*reinterpret_cast<const cl_vals<8, float>\*>", _body(src))) == 2
    got = _run_on_host(src, ir.name, ", 3", 1, 32, tmp_path)
    np.testing.assert_array_equal(got, _cpu(runs_kernel, (3,), 1, 32))


# --------------------------------------------------------------------------- swizzled sums

def _swizzle_cases():
    from cutelab.kernel.ir.symbolic import Var, add, mul, swizzle_expr

    t = Var("tid.x", 256)
    p1 = add(add(mul((t // 8) % 2, 512), mul(t % 8, 8)), mul(t // 16, 64))  # tensorop_gemm's A tile
    p2 = add(add(add(mul((t // 32) % 2, 2048), mul(t % 4, 2)), mul((t % 32) // 4, 128)), mul(t // 64, 8))
    cases = [swizzle_expr(add(p1, c), 3, 3, 3) for c in (1024, 2048, 3072, 8192, 1, 7, 8, 64, 4104)]
    cases += [swizzle_expr(add(p2, c), 3, 4, 3) for c in (1, 96, 1024, 1025, 4097, 13409, 2, 16, 130)]
    return [e for e in cases if not isinstance(e, int)]


@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
def test_swizzled_sums_print_as_the_swizzled_terms_xor_a_constant(tmp_path):
    """Swizzle(P + c) prints as (Swizzle(P) ^ k) + c_add where P cannot set the low bits of c
    (cuda.swz_split), and directly where it can; every printed expression equals the symbolic one
    for every thread."""
    from cutelab.kernel.ir.symbolic import evaluate

    ir = _traced(runs_kernel, (3,), 1, 32)
    funcs, split = [], 0
    for i, e in enumerate(_swizzle_cases()):
        r = cuda.CudaRenderer(ir)  # each expression in a function of its own: its own locals
        p = cuda._IntPrinter(e, (e.lo, e.hi), {}, r.shared_sums)
        code = p(e)
        split += cuda.swz_split(e) is not None
        funcs.append(f"long long f{i}() {{\n" + "\n".join(r.lines) + f"\n  return (long long)({code});\n}}\n")
    assert split >= 8  # the disjoint constants (and nothing else) split
    n = len(funcs)
    main = ("int main() { for (unsigned int t = 0; t < 256; ++t) { threadIdx = cl_dim3{t, 0, 0};"
            + "".join(f' printf("%lld ", f{i}());' for i in range(n)) + ' printf("\\n"); } }\n')
    cpp = tmp_path / "swz.cpp"
    cpp.write_text(_HOST + "".join(funcs) + main)
    c = subprocess.run([GXX, "-std=c++17", "-o", str(tmp_path / "swz"), str(cpp)], capture_output=True, text=True,
                       timeout=300)
    assert c.returncode == 0, c.stderr[-3000:]
    out = subprocess.run([str(tmp_path / "swz")], capture_output=True, text=True, timeout=60).stdout.split("\n")
    got = np.array([[int(x) for x in line.split()] for line in out if line.strip()])
    want = np.stack([np.asarray(evaluate(e, {"tid.x": np.arange(256, dtype=np.int64)})) for e in _swizzle_cases()], 1)
    np.testing.assert_array_equal(got, want)
