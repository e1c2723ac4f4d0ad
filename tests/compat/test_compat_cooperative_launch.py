"""CUTLASS's dsl_tutorials/cooperative_launch.py (tests/compat/programs/tutorials/cooperative_launch.py,
byte for byte as of CUTLASS commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4), run unchanged by `cutelab run`,
and the mechanisms it needed, tested on their own:

- ``cuda.bindings.runtime.cudaMalloc``/``cudaMemset``/``cudaFree`` on the emulated device, whose memory
  ``make_ptr`` of its address reads and writes; ``checkCudaErrors`` and ``DSLCudaRuntimeError``;
- a pointer (not a tensor) as a kernel argument;
- inline PTX ``ld.global.acquire.gpu.b32`` / ``atom.add.release.gpu.u32`` on that pointer's address
  (lowered to cutelab's memory-ordering ops, kernel/instr/atomics.py);
- ``launch(cooperative=True)``: the interpreter runs the whole grid as one batch, so the program's
  grid-wide barrier (a counter with a phase bit, spun on in global memory) completes; a grid that
  cannot be resident at once is refused with cudaErrorCooperativeLaunchTooLarge, as the runtime does.
"""
import hashlib
import os
import re
import subprocess
import sys

import pytest

from compat_helpers import PROGRAMS, SRC, ok, run

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernel"))
from sm90_util import nvcc_compiles  # noqa: E402  (nvcc for sm_90a, skipped where it is not installed)

PROGRAM = os.path.join(PROGRAMS, "tutorials", "cooperative_launch.py")

_DRIVER = """
import sys
from cutelab.compat.run import main
out = sys.argv[1]
rc = main(sys.argv[2:])
from cutelab.kernel import last_launch
from cutelab.kernel.cuda import printer
open(out, "w").write(printer.render(last_launch().ir))
sys.exit(rc)
"""


def test_the_program_is_cutlass_file_unchanged():
    with open(PROGRAM, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == "e9d9c4404041cb88dbbe642c255bfb22fb7477d05e950a373f27c539ca2efba3"


def test_cooperative_launch_tutorial_runs_unchanged(tmp_path):
    """The program asserts that the 10000-block launch fails with cudaErrorCooperativeLaunchTooLarge, then
    runs 8 CTAs through 10 grid barriers; block 0's thread 0 prints after each."""
    env = dict(os.environ, PYTHONPATH=SRC, PYTHONHASHSEED="0")
    env.pop("CUTE_DSL_ARCH", None)
    cu = tmp_path / "kernel.cu"
    p = subprocess.run([sys.executable, "-c", _DRIVER, str(cu), PROGRAM], cwd=str(tmp_path), env=env,
                       capture_output=True, text=True, timeout=300)
    out = ok(p)
    assert re.findall(r"All threads arrived at barrier for the (\d+)th iteration", out) == [str(i) for i in range(10)]
    src = cu.read_text()
    assert "atom.release.gpu.global.add.u32" in src and "ld.acquire.gpu.global.b32" in src
    nvcc_compiles(src)


BARRIER = """
import cutlass, cutlass.cute as cute
import cuda.bindings.runtime as rt
from cutlass.base_dsl.runtime.cuda import checkCudaErrors
from cutlass.cutlass_dsl import DSLCudaRuntimeError
from cutlass._mlir.dialects import llvm

@cute.kernel
def k(p: cute.Pointer, out: cute.Tensor):
    bidx, _, _ = cute.arch.block_idx()
    tidx, _, _ = cute.arch.thread_idx()
    if tidx == 0:
        old = cutlass.Uint32(llvm.inline_asm(cutlass.Uint32.mlir_type, [p.toint().ir_value(), cutlass.Uint32(1).ir_value()],
                             "atom.add.relaxed.gpu.u32 $0, [$1], $2;", "=r,l,r", has_side_effects=True))
        out[bidx] = old
    cute.arch.sync_threads()
    if tidx == 0:
        while cutlass.Uint32(llvm.inline_asm(cutlass.Uint32.mlir_type, [p.toint().ir_value()],
                             "ld.global.acquire.gpu.u32 $0, [$1];", "=r,l", has_side_effects=True)) != GRID:
            pass

@cute.jit
def go(p: cute.Pointer, out: cute.Tensor, grid: cutlass.Constexpr, threads: cutlass.Constexpr):
    k(p, out).launch(grid=(grid, 1, 1), block=(threads, 1, 1), cooperative=True)

import numpy as np, torch
GRID = int(__import__("sys").argv[1])
THREADS = int(__import__("sys").argv[2])
raw = checkCudaErrors(rt.cudaMalloc(4))
checkCudaErrors(rt.cudaMemset(raw, 0, 4))
p = cute.runtime.make_ptr(cutlass.Uint32, raw, cute.AddressSpace.gmem)
out = torch.zeros(GRID, dtype=torch.int32)
try:
    go(p, cute.runtime.from_dlpack(out), GRID, THREADS)
    print("olds", sorted(out.tolist()))
except DSLCudaRuntimeError as e:
    print("refused", int(e.error_code), e.error_code == rt.cudaError_t.cudaErrorCooperativeLaunchTooLarge, e)
checkCudaErrors(rt.cudaFree(raw))
try:
    checkCudaErrors(rt.cudaFree(raw))
except DSLCudaRuntimeError as e:
    print("double free:", e.error_name)
"""


def test_every_cta_waits_for_every_other_in_a_cooperative_launch(tmp_path):
    """264 CTAs (2 of 1024 threads on each of the emulated H100's 132 SMs) each add 1 to a counter, then spin
    until it reaches the grid size: the interpreter must run every CTA before any spin can end. The old
    values the atomics return are 0..263, each once."""
    out = ok(run(tmp_path, BARRIER, "264", "1024", timeout=300))
    assert f"olds {list(range(264))}" in out, out
    assert "double free: cudaErrorInvalidDevicePointer" in out


def test_a_grid_that_cannot_be_resident_is_refused_by_name(tmp_path):
    out = ok(run(tmp_path, BARRIER, "265", "1024", timeout=300))
    m = re.search(r"refused 82 True (.*)", out)
    assert m, out
    assert "cudaErrorCooperativeLaunchTooLarge" in m.group(1) and "265 CTAs" in m.group(1) and "at most 264" in m.group(1)


def test_inline_ptx_on_a_global_address_other_than_ld_st_atom_red_is_refused(tmp_path):
    # (atom.inc.u32 is lowered since quack's semaphores use it; prmt on a global address is not a memory op)
    src = BARRIER.replace("atom.add.relaxed.gpu.u32 $0, [$1], $2;", "prmt.b32 $0, $1, $2, 0x3210;")
    p = run(tmp_path, src, "2", "32", timeout=300)
    assert p.returncode != 0
    assert "prmt.b32" in p.stderr and "prog.py" in p.stderr, p.stderr[-2000:]


NAMED = """
import cutlass, cutlass.cute as cute, cutlass.pipeline as pipeline
import numpy as np, torch

@cute.kernel
def k(out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    wg = tidx // 64
    if wg > 0:
        out[tidx] = tidx
        pipeline.arrive_and_wait(barrier_id=wg, num_threads=64)  # warp pair 1 on barrier 1, pair 2 on barrier 2
        out[tidx] = out[(tidx + 1) % 64 + wg * 64] * 10  # a neighbour's write, ordered by the barrier

@cute.jit
def go(out: cute.Tensor):
    k(out).launch(grid=(1, 1, 1), block=(192, 1, 1))

out = torch.zeros(192, dtype=torch.int32)
go(cute.runtime.from_dlpack(out))
print("vals", out.tolist() == [0] * 64 + [((t + 1) % 64 + (t // 64) * 64) * 10 for t in range(64, 192)])
"""


def test_a_named_barrier_id_computed_in_the_kernel(tmp_path):
    """barrier_id=thread_idx // 64: each pair of warps waits on its own barrier (bar.sync 1, 64 / bar.sync 2, 64)."""
    out = ok(run(tmp_path, NAMED, timeout=300))
    assert "vals True" in out, out
