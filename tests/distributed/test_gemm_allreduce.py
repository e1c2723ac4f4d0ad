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
                f"the writes to symmetric memory before it (to_peer_{1 - r.rank} at {PUSH}:{push}; "
                f"to_peer_{r.rank} at {PUSH}:{push})") in r.err, r.err[-3000:]
