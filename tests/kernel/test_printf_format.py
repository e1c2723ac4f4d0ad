"""cute.printf with C conversions and {} as CuTe DSL 4.8.1 prints them (host and kernels, both
back ends), and the order of prints in a @cute.jit function (trace-time print() first)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.frontend.cformat import format_host, parse
from cutelab.kernel.launch.plan import capture, last_launch
from cutelab.runtime import from_dlpack


def _out(fn, *a, **kw) -> str:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        fn(*a, **kw)
    return out.getvalue()


# What CuTe DSL 4.8.1 printed for each cute.printf call in a @cute.jit function on the host:
# tests/golden/printf.json, made by scripts/make_printf_golden.py.
with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden", "printf.json")) as _f:
    GOLDEN = json.load(_f)["cases"]


def _tup(x):
    return tuple(_tup(y) for y in x) if isinstance(x, list) else x


def _arg(a):
    kind, v = a
    if kind in ("int", "float", "bool"):
        return {"int": int, "float": float, "bool": bool}[kind](v)
    if kind == "tuple":
        return _tup(v)
    if kind == "layout":
        shape, stride = v
        return cute.make_layout(_tup(shape), stride=_tup(stride)) if stride is not None else cute.make_layout(_tup(shape))
    return getattr(cutlass, kind)(v)


@pytest.mark.parametrize("case", GOLDEN, ids=[f"{i}:{c['format']}" for i, c in enumerate(GOLDEN)])
def test_host_printf_prints_as_cute_dsl(case):
    assert "failed" not in case
    args = [_arg(a) for a in case["args"]]
    call = args if case["format"] is None else [case["format"]] + args

    @cute.jit
    def f():
        cute.printf(*call)

    assert _out(f) == case["output"]
    assert _out(cute.printf, *call) == case["output"]  # outside a jit function too


def test_golden_printf_covers_formats():
    assert len(GOLDEN) >= 25 and all("output" in c for c in GOLDEN)


def test_end_keyword():
    @cute.jit
    def f():
        cute.printf("end", end="")
        cute.printf("|after")

    assert _out(f) == "end|after\n"  # CuTe DSL: 'end|after'


@pytest.mark.parametrize("args, msg", [
    (("%f", cutlass.Int32(5)), r"'%f' needs a floating-point value, got the int value 5"),  # DSL: 0.000000
    (("%d", cutlass.Float32(1.5)), r"'%d' needs an integer, got the floating-point value 1.5"),  # DSL: garbage
    (("{} {}", 1), r"2 placeholders .* 1 argument was given"),  # DSL: '1 {}'
    (("%d %d", 1), r"2 placeholders"),  # DSL: '1' and garbage
    (("%s", "hi"), r"unsupported conversion '%s'"),  # DSL: TypeError
    (("50%",), r"a '%' at the end"),
    ((), r"at least one argument"),
])
def test_bad_formats_are_clear_errors(args, msg):
    with pytest.raises(TraceError, match=msg):
        cute.printf(*args)


def test_parse_keeps_literals_and_placeholders_in_order():
    p = parse("x=%-8.3e|{}|%%|%llx")
    assert [x if isinstance(x, str) else x.text for x in p] == ["x=", "%-8.3e", "|", "{}", "|%|", "%llx"]
    assert format_host("%llx", -1) == "ffffffffffffffff" and format_host("%x", -1) == "ffffffff"


# ---- inside kernels: the interpreter and the CUDA text
@cute.kernel
def _kp(A: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    v = A[tidx]
    cute.printf("t=%3d|%x|%u|%.2f|{}|{}|%e|{}|%5.1f", tidx, tidx + 10, n - 5, v, v > 1.0, (tidx, 2), v, n, 2.0)


def test_kernel_printf_formats_in_the_interpreter():
    A = np.array([0.5, 1.5, 2.25], np.float32)
    out = _out(lambda: _kp(from_dlpack(A), 4).launch(grid=1, block=3))
    assert out == ("t=  0|a|4294967295|0.50|0|(0,2)|5.000000e-01|4|  2.0\n"
                   "t=  1|b|4294967295|1.50|1|(1,2)|1.500000e+00|4|  2.0\n"
                   "t=  2|c|4294967295|2.25|1|(2,2)|2.250000e+00|4|  2.0\n")


def test_kernel_printf_cuda_text():
    A = np.array([0.5, 1.5, 2.25], np.float32)
    with capture() as ks:
        _kp(from_dlpack(A), 4).launch(grid=1, block=3)
    src = cuda.render(ks[0])
    line = src[src.index("printf("):].split("\n")[0]
    assert line.startswith('printf("t=%3d|%x|%u|%.2f|%d|(%lld,2)|%e|%lld|  2.0\\n", (int)(')
    assert "(unsigned int)(" in line and "(double)(" in line
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("no nvcc")
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"cl_printf_{os.getpid()}.cu")
    with open(path, "w") as f:
        f.write(src)
    r = subprocess.run([nvcc, "-arch=sm_90a", "-ptx", "-o", path[:-3] + ".ptx", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    ptx = open(path[:-3] + ".ptx").read()
    assert "vprintf" in ptx


def test_kernel_printf_rejects_mismatched_conversion():
    @cute.kernel
    def bad(A: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        cute.printf("%f", tidx)

    with pytest.raises(TraceError, match=r"'%f' needs a floating-point value"):
        bad(from_dlpack(np.zeros(2, np.float32))).launch(grid=1, block=2)


# ---- order: trace-time print() first, then launches and host printfs in program order
@cute.kernel
def _hello(n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    cute.printf("kernel t{} n={}", tidx, n)


@cute.jit
def _host(n: cutlass.Int32):
    print("trace1", n)
    cute.printf("run1 {}", n)
    _hello(n).launch(grid=1, block=2, interpret=True)
    print("trace2")
    cute.printf("run2 {}", n * 2)
    print("trace3")


def test_jit_prints_trace_first_then_runtime_in_order():
    # CuTe DSL 4.8.1 (host printfs; a kernel's printf runs where it is launched)
    assert _out(_host, cutlass.Int32(3)) == ("trace1 ?\ntrace2\ntrace3\nrun1 3\nkernel t0 n=3\nkernel t1 n=3\n"
                                             "run2 6\n")


def test_jit_called_twice_traces_twice():
    out = _out(lambda: (_host(cutlass.Int32(3)), _host(cutlass.Int32(4))))
    assert out.count("trace1 ?") == 2 and "run2 8" in out  # CuTe DSL: each call traces (and prints) again


def test_compiled_function_prints_host_side_at_every_call():
    with contextlib.redirect_stdout(io.StringIO()) as out:
        c = cute.compile(_host, cutlass.Int32(3))
        print("compiled")
        c(cutlass.Int32(3))
        c(cutlass.Int32(3))
    assert out.getvalue() == ("trace1 ?\ntrace2\ntrace3\ncompiled\n"
                              + "run1 3\nkernel t0 n=3\nkernel t1 n=3\nrun2 6\n" * 2)


def test_compiled_function_with_new_dynamic_value():
    # CuTe DSL: 'compiled', then run1 4 / run2 8, run1 5 / run2 10, and no trace-time prints
    with contextlib.redirect_stdout(io.StringIO()) as out:
        c = cute.compile(_host, cutlass.Int32(3))
        print("compiled")
        c(cutlass.Int32(4))
        c(cutlass.Int32(5))
        c(cutlass.Int32(4))
    assert out.getvalue() == ("trace1 ?\ntrace2\ntrace3\ncompiled\n"
                              "run1 4\nkernel t0 n=4\nkernel t1 n=4\nrun2 8\n"
                              "run1 5\nkernel t0 n=5\nkernel t1 n=5\nrun2 10\n"
                              "run1 4\nkernel t0 n=4\nkernel t1 n=4\nrun2 8\n")


def test_print_tensor_on_the_host_runs_after_the_kernel():
    @cute.kernel
    def fill(A: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        A[tidx] = A[tidx] + 1.0

    @cute.jit
    def f(A: cute.Tensor):
        cute.print_tensor(A)
        fill(A).launch(grid=1, block=2, interpret=True)
        cute.print_tensor(A)
        print("traced")

    a = np.zeros(2, np.float32)
    out = _out(f, from_dlpack(a))
    assert out.startswith("traced\n"), out
    blocks = re.split(r"raw_ptr\(", out[len("traced\n"):])[1:]  # the two prints, whatever their format
    assert len(blocks) == 2, out
    vals = [[float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", b.split("=", 1)[1])] for b in blocks]
    assert vals == [[0.0, 0.0], [1.0, 1.0]], out


def test_a_launch_in_a_jit_function_keeps_its_stream():
    from cutelab.kernel.launch import api as L

    seen = []
    real = L._Plan.run

    def spy(self, storages, stream=None, scalars=()):
        seen.append(stream)
        return real(self, storages, None, scalars)  # the interpreter ignores streams

    @cute.jit
    def f(n: cutlass.Int32):
        _hello(n).launch(grid=1, block=1, interpret=True, stream="my-stream")
        _hello(n).launch(grid=1, block=1, interpret=True)

    L._Plan.run = spy
    try:
        _out(f, 1)
    finally:
        L._Plan.run = real
    assert seen == ["my-stream", None]
