"""Pass ``loopidx`` (kernel/passes/loopidx.py, cuda/loopvars.py): where ptxas spills a kernel with a
runtime loop, the loop bodies read the thread index and the broadcast warp index from per-trip
copies NVVM cannot hoist, and the launch keeps the build that spills fewer bytes."""

from __future__ import annotations

import re
from dataclasses import replace
from types import SimpleNamespace

import numpy as np

import cutelab as cute
import cutelab as cutlass
from cutelab.kernel.cuda.build import build
from cutelab.kernel.cuda.printer import CudaRenderer, render
from cutelab.kernel.launch.plan import capture
from cutelab.kernel.passes import Options, run_passes
from cutelab.runtime import from_dlpack


@cute.kernel
def strided(A: cute.Tensor, C: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(tidx // 32)
    acc = A[tidx] * 0
    for i in range(n):  # a runtime loop: each trip reads at the thread and warp indices
        acc = acc + A[i * 64 + tidx] + A[warp]
        j = 0
        while j < n:  # a nested runtime loop
            acc = acc + A[(j % 4) * 64 + tidx]
            j = j + 1
    C[tidx] = acc


def _ir():
    A = np.zeros(512, np.float32)
    with capture() as ks:
        strided(from_dlpack(A, assumed_align=16), from_dlpack(A.copy(), assumed_align=16), cutlass.Int32(4)).launch(
            grid=(1, 1, 1), block=(64, 1, 1))
    return ks[0]


def _loop_lines(src):
    """The lines of the kernel's outer for loop, its head and closing brace included."""
    lines = src.split("\n")
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("for ("))
    pad = len(lines[at]) - len(lines[at].lstrip())
    end = next(i for i in range(at + 1, len(lines)) if lines[i] == " " * pad + "}")
    return lines[at:end + 1]


def test_loop_bodies_read_per_trip_copies_of_the_thread_and_warp_indices():
    ir = _ir()
    plan = run_passes(ir, Options())
    assert plan.loopidx_ok and not plan.loopidx
    plain = render(ir)
    assert "asm volatile(\"\"" not in plain  # the first print: NVVM may hoist as it likes
    src = CudaRenderer(ir, plan=replace(plan, loopidx=True)).render()
    loop = _loop_lines(src)
    # the copies open each body: the for loop's (thread and warp index) and the while loop's (thread index)
    tid_copy = re.compile(r'unsigned int (cl_tidx\d+) = threadIdx\.x; asm volatile\(""\s*:\s*"\+r"\(\1\)\);')
    copies = [m.group(1) for m in map(tid_copy.search, loop) if m]
    assert len(copies) == 2 and tid_copy.search(loop[1]), loop[:3]
    warp_copy = re.search(r'unsigned int (hd\d+_\d+) = (hd\d+); asm volatile\(""\s*:\s*"\+r"\(\1\)\);',
                          "\n".join(loop[1:3]))
    assert warp_copy, loop[:3]
    body = "\n".join(loop[1:])
    # inside the loop nothing reads threadIdx or the entry's warp index but through a copy
    assert body.count("threadIdx.x") == 2 and re.findall(rf"\b{warp_copy.group(2)}\b", body) == [warp_copy.group(2)]
    assert all(c in body.split("while (true)")[1] for c in copies[1:])
    # outside the loop the code is as before (up to the temporaries' numbers)
    assert re.sub(r"\d+", "#", src.split("for (")[0]) == re.sub(r"\d+", "#", plain.split("for (")[0])


def test_a_kernel_without_a_loop_is_no_candidate():
    @cute.kernel
    def flat(A: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        A[tidx] = A[tidx] + 1.0

    A = np.zeros(64, np.float32)
    with capture() as ks:
        flat(from_dlpack(A, assumed_align=16)).launch(grid=(1, 1, 1), block=(64, 1, 1))
    assert not run_passes(ks[0], Options()).loopidx_ok


def _log(spill):
    return (f"ptxas info    : Used 255 registers, used 1 barriers, {spill} bytes stack frame, {spill} bytes spill "
            f"stores, {spill} bytes spill loads")


def test_the_launch_prints_the_copies_only_where_ptxas_spills_and_keeps_the_fewer_spills(monkeypatch):
    monkeypatch.delenv("CUTELAB_PASSES_OFF", raising=False)
    monkeypatch.setenv("CUTELAB_PASSES_ON", "loopidx")
    ir = _ir()
    seen = []

    def compile_with(spills):
        def comp(src):
            copies = "asm volatile(\"\"" in src
            seen.append(copies)
            return SimpleNamespace(log=_log(spills[copies]))
        return comp

    for spills, copies_kept, builds in (({False: 0, True: 0}, False, 1),       # no spills: one print
                                        ({False: 64, True: 16}, True, 2),      # fewer with the copies
                                        ({False: 16, True: 16}, False, 2),     # a tie: the first
                                        ({False: 16, True: 64}, False, 2)):
        seen.clear()
        r, src, res = build(ir, compile_with(spills))
        assert ("asm volatile(\"\"" in src) == copies_kept == r.plan.loopidx and len(seen) == builds, spills
        assert res.log == _log(spills[copies_kept])
    for off, on in (("loopidx", "loopidx"), ("", "")):  # turned off (off wins), then never turned on (its default)
        monkeypatch.setenv("CUTELAB_PASSES_OFF", off)
        monkeypatch.setenv("CUTELAB_PASSES_ON", on)
        seen.clear()
        _, src, _ = build(ir, compile_with({False: 64, True: 0}))
        assert seen == [False] and "asm volatile(\"\"" not in src
