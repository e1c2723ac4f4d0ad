"""The host cost of CUTLASS's Hopper FMHA's compiled call, on any machine: the fake CUDA driver, no GPU.

CUTLASS's ``fmha.py`` (tests/compat/programs/cute/hopper/kernel/attention/fmha.py, unchanged) is imported
as ``cutelab run`` imports it (cutelab's compatibility layer), its ``HopperFusedMultiHeadAttentionForward``
compiled for the tensors its ``run()`` makes (Q, K, V, O and LSE permuted to (s, d, h_r, h_k, b), dynamic
layouts, f16 in and out, f32 accumulators) and called as its benchmark calls it: the same arguments each
call (its three runtime Float32 scales, two ``None`` windows, a stream). Under the fake driver
(kernel/cuda/fakegpu.py, not recording) the launch path runs up to cuLaunchKernel, which does nothing, so
the time is cutelab's own: the argument checks, the TMA descriptors, the parameter writes. On a GPU the
driver's cuLaunchKernel adds its own (4.2-4.8 us a call on the H100 and H200 of RESULTS.md's
host_steadiness section).

Rows: ``generated call`` (the compiled call as it runs) and ``general path`` (``CUTELAB_DIRECT_CALL=0``:
what every call of a kernel with TMA descriptors took before the generated call covered them). Per row,
the CPU time of the calls (time.process_time: on a shared machine, what the calls cost without the time
others took) over ``--calls`` calls, ``--rounds`` rounds, median and range.

    PYTHONPATH=$PWD/src python benchmarks/fmha_host.py [--size 4,1024,8,64] [--calls 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests/compat/programs/cute/hopper/kernel/attention/fmha.py"
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]  # (benchmarks/copy.py)


def child(size: str, persistent: bool, calls: int, rounds: int) -> None:
    sys.path.insert(0, str(ROOT / "src"))
    from cutelab.compat import install

    install()
    import torch

    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu

    b, s, h, d = (int(x) for x in size.split(","))
    sys.path.insert(0, str(PROGRAM.parents[4]))  # the program's helpers/, as its __main__ block adds it
    with fake_gpu(arch=(9, 0), record=False):
        spec = importlib.util.spec_from_file_location("fmha", PROGRAM)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        import cuda.bindings.driver as cuda
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import from_dlpack

        def tensor(dd: int, dt: object, cdt: object) -> object:  # as run()'s create_and_permute_tensor
            t = fake_cuda_tensor(torch.zeros(b, s, h, 1, dd, dtype=dt).permute(1, 4, 3, 2, 0))
            c = from_dlpack(t, assumed_align=16)
            c.element_type = cdt
            return c.mark_layout_dynamic(leading_dim=1)

        q, k, v, o = (tensor(d, torch.float16, cutlass.Float16) for _ in range(4))
        lse = tensor(1, torch.float32, cutlass.Float32)
        fmha = mod.HopperFusedMultiHeadAttentionForward(cutlass.Float32, cutlass.Float32, (64, 128, d), persistent,
                                                        mod.fmha_utils.MaskEnum.WINDOW_MASK)
        scale = 1.0 / math.sqrt(s)  # run()'s default scale_softmax
        args = (q, k, v, o, lse, scale * 1.4426950408889634, scale, 1.0, None, None, cuda.CUstream(0))
        f = cute.compile(fmha, *args)
        for _ in range(20):
            f(*args)
        per = []
        for _ in range(rounds):
            t0 = time.process_time()
            for _ in range(calls):
                f(*args)
            per.append((time.process_time() - t0) / calls * 1e6)
        print(f"{statistics.median(per):.2f} {min(per):.2f} {max(per):.2f} {f._fast.direct is not None}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="4,1024,8,64", help="batch,seqlen,heads,head_dim (Q and K alike)")
    ap.add_argument("--not-persistent", action="store_true", help="without --is_persistent")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.size, not a.not_persistent, a.calls, a.rounds)
        return 0
    print(f"CUTLASS's Hopper fmha.py, b,s,h,d = {a.size}{'' if a.not_persistent else ', persistent'}; "
          f"fake driver; CPU us per call over {a.calls} calls, {a.rounds} rounds")
    print("| row | CPU us/call, median (range) | generated call |")
    print("|---|---|---|")
    for label, direct in (("generated call", "1"), ("general path (CUTELAB_DIRECT_CALL=0)", "0")):
        env = dict(os.environ, CUTELAB_DIRECT_CALL=direct,
                   PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
        cmd = [sys.executable, __file__, "--child", "--size", a.size, "--calls", str(a.calls), "--rounds", str(a.rounds)]
        p = subprocess.run(cmd + (["--not-persistent"] if a.not_persistent else []), env=env, capture_output=True,
                           text=True)
        if p.returncode:
            print(f"| {label} | failed: {(p.stderr or p.stdout).strip().splitlines()[-1:]} | |")
            continue
        med, lo, hi, gen = p.stdout.split()[-4:]
        print(f"| {label} | {med} ({lo}-{hi}) | {'yes' if gen == 'True' else 'no'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
