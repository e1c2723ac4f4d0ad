"""examples/distributed/gemm_allreduce.py (a Hopper GEMM fused with an all-reduce) as 2 and 4 ranks on the CPU:
every call checked against torch.matmul + dist.all_reduce by the program itself; its planted missing fence
reported by CUTELAB_RACECHECK=1, naming the signal and the pushes it does not order."""
import os
import re

import pytest

from ranks import run_ranks

pytest.importorskip("torch.distributed")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAM = os.path.join(ROOT, "examples", "distributed", "gemm_allreduce.py")
RACECHECK = {"CUTELAB_RACECHECK": "1"}


def _ok(results):
    for r in results:
        assert r.code == 0, f"rank {r.rank} exit {r.code}\nstdout:\n{r.out[-2000:]}\nstderr:\n{r.err[-4000:]}"
    return results


def _line_of(text):
    with open(PROGRAM) as f:
        for i, line in enumerate(f, 1):
            if text in line:
                return i
    raise AssertionError(f"{text!r} not in {PROGRAM}")


@pytest.mark.parametrize("n,calls", [(2, 3), (4, 2)])
def test_fused_gemm_allreduce(n, calls):
    """Checked calls (alternating halves of the receive buffer, new inputs each time), unrolled loops."""
    rs = _ok(run_ranks(PROGRAM, n, ["--mnk", "128,128,64", "--calls", str(calls)], env=RACECHECK, timeout=120))
    assert f"gemm_allreduce: {n} ranks, 128x128x64 bf16 per rank, {calls} fused calls: results verified" in rs[0].out


def test_fused_gemm_allreduce_runtime_loops():
    """--dynamic (the GPU's form: runtime tile and k loops), 3 CTAs for 8 tiles, f16, and the unfused
    HopperGemm + dist.all_reduce checked too."""
    rs = _ok(run_ranks(PROGRAM, 2, ["--mnk", "128,256,128", "--dynamic", "--ctas", "3", "--dtype", "f16",
                                    "--calls", "2", "--unfused"], env=RACECHECK, timeout=120))
    assert "gemm_allreduce: 2 ranks, 128x256x128 f16 per rank, 2 fused calls: results verified" in rs[0].out


def test_fused_missing_fence_is_a_race():
    rs = run_ranks(PROGRAM, 2, ["--mnk", "128,128,64", "--calls", "1", "--plant", "no-fence"], env=RACECHECK)
    signal = _line_of('epoch, sem="relaxed",')
    push = _line_of("cute.copy(rows, tOsC, thr_rows.partition_D(")
    for r in rs:
        assert r.code == 1, r.err[-2000:]
        m = re.search(r"RaceError: kernel_ar: race across ranks \(CUTELAB_RACECHECK\): the signal "
                      r"st\.relaxed\.sys\.global\.b32 on flags_\d at (\S+):(\d+) is not ordered after the writes to "
                      r"symmetric memory before it \(([^)]*)\)", r.err)
        assert m, r.err[-3000:]
        assert m.group(1) == PROGRAM and int(m.group(2)) == signal
        writes = m.group(3).split("; ")
        # the pushes to both ranks' receive buffers, and nothing else (not the tile's shared-memory staging)
        assert sorted(w.split(" at ")[0] for w in writes) == ["recvs_0", "recvs_1"], writes
        assert all(w.endswith(f"gemm_allreduce.py:{push}") for w in writes), writes
    ok = _ok(run_ranks(PROGRAM, 2, ["--mnk", "128,128,64", "--calls", "1", "--plant", "no-fence"]))
    assert "results verified" in ok[0].out  # unchecked it runs (the CPU is stronger than the GPU)


PUSH = os.path.join(ROOT, "examples", "distributed", "allreduce_push.py")


@pytest.mark.parametrize("n,dtype,ctas", [(2, "f32", 1), (4, "bf16", 2)])
def test_allreduce_push(n, dtype, ctas):
    """Our one-shot all-reduce (16-byte pushes, a release flag per CTA): two checked calls, one per half of the
    receive buffer; 1024 f32 are 2 tiles (1 CTA pushes both before it signals), 2048 bf16 2 tiles on 2 CTAs."""
    elems = 1024 if dtype == "f32" else 2048
    rs = _ok(run_ranks(PUSH, n, ["--elems", str(elems), "--dtype", dtype, "--calls", "2", "--ctas", str(ctas)],
                       env=RACECHECK, timeout=120))
    assert f"allreduce_push: {n} ranks, {elems} {dtype} elements, 2 calls: results verified" in rs[0].out


def test_allreduce_push_missing_fence_is_a_race():
    rs = run_ranks(PUSH, 2, ["--elems", "1024", "--calls", "1", "--plant", "no-fence"], env=RACECHECK)
    with open(PUSH) as f:
        lines = f.read().splitlines()
    signal = next(i for i, s in enumerate(lines, 1) if 'epoch, sem="relaxed", scope="sys")' in s)
    push = next(i for i, s in enumerate(lines, 1) if "cute.copy(tiled, frag, thr.partition_D(to_peer[" in s)
    for r in rs:
        assert r.code == 1, r.err[-2000:]
        assert (f"the signal st.relaxed.sys.global.b32 on flags_{1 - r.rank} at {PUSH}:{signal} is not ordered after "
                f"the writes to symmetric memory before it (recvs_{1 - r.rank} at {PUSH}:{push}; "
                f"recvs_{r.rank} at {PUSH}:{push})") in r.err, r.err[-3000:]


def test_gpu_launch_path():
    """Both kernels compiled (cute.compile) and launched three times each through the GPU launch path under a
    fake GPU (cutelab.kernel.cuda.fakegpu: traced, printed as CUDA, parameters packed; nothing runs), as rank 0
    of 2: each call passes the same arguments (lists of peer buffers, flags, the device-side call counter) and
    makes one launch with them, with no new trace per call (the epoch is not a host argument)."""
    import sys

    import torch

    import cutelab as cute
    import cutelab as cutlass
    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu
    from cutelab.kernel.launch import api
    from cutelab.runtime import from_dlpack

    saved = list(sys.path)
    sys.path[:0] = [os.path.dirname(PROGRAM)]
    try:
        import allreduce_push
        import gemm_allreduce  # (puts examples/gemm on sys.path for sm90_gemm)
    finally:
        sys.path[:] = saved
    M, N, K, W = 256, 512, 128, 2
    with fake_gpu() as gpu:
        A, B = (fake_cuda_tensor(torch.randn(r, K).bfloat16()) for r in (M, N))
        C = fake_cuda_tensor(torch.zeros(M, N).bfloat16())
        recv = [fake_cuda_tensor(torch.zeros(2, W, M, N).bfloat16()) for _ in range(W)]
        flags = [fake_cuda_tensor(torch.zeros(W * 4, dtype=torch.int32)) for _ in range(W)]
        state = fake_cuda_tensor(torch.zeros(2, dtype=torch.int32))
        g = gemm_allreduce.GemmAllReduce(0, W, ab_dtype=cutlass.BFloat16, tile_mnk=(128, 256, 64), stages=3,
                                         num_ctas=132, dynamic=True, mma_warpgroups=2)
        args = (*(from_dlpack(x, assumed_align=16) for x in (A, B, C)),
                [from_dlpack(r, assumed_align=16) for r in recv], [from_dlpack(f) for f in flags], from_dlpack(state))
        fused = cute.compile(g.fused, *args)
        n = 4096
        x, y = fake_cuda_tensor(torch.randn(n)), fake_cuda_tensor(torch.zeros(n))
        rr = [fake_cuda_tensor(torch.zeros(2, W, n)) for _ in range(W)]
        ff = [fake_cuda_tensor(torch.zeros(W * 8, dtype=torch.int32)) for _ in range(W)]
        st = fake_cuda_tensor(torch.zeros(2, dtype=torch.int32))
        pargs = (from_dlpack(x, assumed_align=16), [from_dlpack(r, assumed_align=16) for r in rr],
                 [from_dlpack(f) for f in ff], from_dlpack(y, assumed_align=16), from_dlpack(st))
        push = cute.compile(allreduce_push.AllReducePush(0, W, 8), *pargs)
        first = len(gpu.driver.launches)
        traces = []
        prepare = api._prepare  # every trace of a kernel goes through it (a compiled call's launch does not)
        api._prepare = lambda *a, **k: traces.append(a[0].name) or prepare(*a, **k)
        try:
            for _ in range(3):
                fused(*args)
                push(*pargs)
        finally:
            api._prepare = prepare
        launches = list(gpu.driver.launches[first:])
    assert traces == []
    assert [(l["kernel"], l["grid"], l["block"]) for l in launches] == \
        [("kernel_ar", (4, 1, 1), (384, 1, 1)), ("kernel", (8, 1, 1), (128, 1, 1))] * 3
    assert launches[0]["smem"] <= 227 * 1024  # 3 stages of 128x256x64 and the C tile
    assert set(launches[0]["tensor_maps"]) == {"tmap_mA", "tmap_mB"}
    want = [{t.data_ptr() for t in (A, B, C, *recv, *flags, state)}, {t.data_ptr() for t in (x, y, *rr, *ff, st)}]
    for i, l in enumerate(launches):
        k = len(want[i % 2])
        assert set(l["params"][:k]) == want[i % 2] and len(l["params"]) in (k, k + 2), l["params"]  # + A's, B's maps
