"""``for i in range(...)`` in a @cute.jit function is a runtime loop, as CuTe DSL makes it: the
loop variable prints '?', what the body launches and printf's happens on every trip with the
trip's value, and its trace-time prints show once. ``range_constexpr`` keeps a Python loop."""

import numpy as np

import cutelab as cute
import cutelab as cutlass
from cutelab.kernel.frontend.host import _QUIET
from cutelab.runtime import from_dlpack


@cute.kernel
def _put(out: cute.Tensor, i: cutlass.Int32):
    out[i] = out[i] + i + 1


@cute.jit
def _loops(out: cute.Tensor, n: cutlass.Int32):
    for i in range(n):
        print("trace", i)
        cute.printf("trip {}", i)
        _put(out, i).launch(grid=(1, 1, 1), block=(1, 1, 1))
    for j in cutlass.range_constexpr(2):
        print("static", j)


def test_runtime_loop_prints_once_and_runs_every_trip(capsys):
    a = np.zeros(4, np.int32)
    _loops(from_dlpack(a), cutlass.Int32(3))
    assert capsys.readouterr().out == "trace ?\nstatic 0\nstatic 1\ntrip 0\ntrip 1\ntrip 2\n"
    assert a.tolist() == [1, 2, 3, 0]
    assert _QUIET.depth == 0


def test_compiled_runtime_loop_replays_every_trip(capsys):
    a = np.zeros(4, np.int32)
    t = from_dlpack(a)
    f = cute.compile(_loops, t, cutlass.Int32(2))
    assert capsys.readouterr().out == "trace ?\nstatic 0\nstatic 1\n"
    f(t, cutlass.Int32(2))
    f(t, cutlass.Int32(4))  # another trip count: traced again (silently), run with its own
    assert capsys.readouterr().out == "trip 0\ntrip 1\n" + "".join(f"trip {i}\n" for i in range(4))
    assert a.tolist() == [2, 4, 3, 4]


@cute.jit
def _nested_break(n: cutlass.Int32):
    for i in range(n):
        for j in range(2):
            print("in", i, j)
        if i == 1:
            break
    print("after")


def test_nested_loops_and_break_restore_prints(capsys):
    _nested_break(cutlass.Int32(5))
    assert capsys.readouterr().out == "in ? ?\nafter\n"
    assert _QUIET.depth == 0


class _Holder:
    @cute.jit
    def run(self, n: cutlass.Int32):
        for i in range(n):
            cute.printf("m {}", i)


def test_jit_method_loops(capsys):
    _Holder().run(cutlass.Int32(2))
    assert capsys.readouterr().out == "m 0\nm 1\n"
