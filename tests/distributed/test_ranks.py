"""Distributed CuTe DSL programs on the CPU: N ranks as N processes (cutelab.compat.distributed).

CUTLASS's all-reduce examples and its all-gather GEMM (tests/distributed/programs/all_reduce_*.py,
distributed_all_gather_gemm_blackwell.py: copied unchanged from NVIDIA/cutlass 7107b05,
examples/python/CuTeDSL/cute/blackwell/kernel/distributed/) and our own all-reduce with
release/acquire flags run as 2 and 4 ranks and pass their own result checks; a flag that no rank
sets is reported as a deadlock naming the rank, the kernel line and the flag. NVLink multicast: our own
multimem all-reduce, CUTLASS's GEMMs fused with a reduce-scatter and with a Lamport all-reduce. The ranks
are forked from the test process (ranks.py); test_torchrun_cli runs the command line as written in issue 22.
"""
import os
import re
import subprocess
import sys

import pytest

from ranks import PROGRAMS, _free_port, run_ranks

pytest.importorskip("torch.distributed")

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + "/src"


RACECHECK = {"CUTELAB_RACECHECK": "1"}  # the correct programs pass the race checks too


def _ok(results):
    for r in results:
        assert r.code == 0, f"rank {r.rank} exit {r.code}\nstdout:\n{r.out[-2000:]}\nstderr:\n{r.err[-4000:]}"
    return results


@pytest.mark.parametrize("n", [2, 4])
def test_allreduce_flags(n):
    rs = _ok(run_ranks("allreduce_flags.py", n, ["--elems", "128"], env=RACECHECK))
    assert f"allreduce_flags: {n} ranks, 128 elements: results verified" in rs[0].out


def test_host_api():
    """Devices per rank, symm_mem handles (peer buffers, signal pads, pointers), peer access, a peer's buffer
    by address (cutlass.torch.as_tensor), nvshmem.core, multicast objects (symm_mem's multicast_ptr, nvshmem's
    get_multicast_tensor: addresses of their own that read this rank's copy on the host), refusals."""
    rs = _ok(run_ranks("host_api.py", 2))
    assert rs[0].out.splitlines() == [
        "devices 2 current 0",
        "handle rank 0 world 2 device cuda:0 is_cuda True",
        "peer buffer holds 1 (its rank 1)",
        "written by the previous rank: 101, signal 7",
        "buffer_ptrs distinct True",
        "multicast_ptr distinct True, reads this rank's copy 101, is_cuda True",
        "peer access True False",
        "as_tensor of the peer's buffer: 1, is_cuda True",
        "has_multicast_support True",
        "as_tensor past the end: cutlass.torch.as_tensor refused True",
        "nvshmem peers [0, 1] pe 0 of 2",
        "get_multicast_tensor (12,) at a new address True, holds 0",
        "get_multicast_tensor of a peer's: the tensor is PE 1's buffer (from get_pe",
        "put: nvshmem.core.put is not emulated by cutelab",
    ]


def test_never_set_flag_is_a_deadlock():
    rs = run_ranks("allreduce_flags.py", 2, ["--elems", "128", "--plant", "never-set"], env={"CUTELAB_DEADLOCK_S": "2"})
    line = _line_of("allreduce_flags.py", "while seen != want:") + 1  # the load inside the polling loop
    for r in rs:
        assert r.code not in (0, None), f"rank {r.rank}: exit {r.code} (None: still running at the timeout)"
        assert "DeadlockError: deadlock across ranks" in r.err, r.err[-3000:]
        mine = re.search(r"rank (\d) \(this one\): (.*)", r.err)
        assert mine and int(mine.group(1)) == r.rank
        assert f"allreduce_flags.py:{line}" in mine.group(2) and f"flags_{r.rank}[" in mine.group(2)
        assert "values seen [1, 1]" in mine.group(2)  # the epoch both ranks stored; the wait wants 2
        other = 1 - r.rank
        assert re.search(rf"rank {other}: (waiting for .*allreduce_flags.py:{line}|exited)", r.err), r.err[-3000:]


def test_a_rank_in_a_collective_is_stalled():
    """Rank 1 never launches the kernel and waits in dist.barrier, which rank 0 (waiting in the kernel for
    rank 1's flags) never reaches: a deadlock, reported at once (after the quiet period)."""
    rs = run_ranks("allreduce_flags.py", 2, ["--elems", "128", "--plant", "rank1-skips"],
                   env={"CUTELAB_DEADLOCK_S": "2"})
    r0 = rs[0]
    assert r0.code == 1, r0.err[-2000:]
    assert "DeadlockError: deadlock across ranks" in r0.err, r0.err[-2000:]
    line = _line_of("allreduce_flags.py", "dist.barrier()  # never met")
    assert re.search(rf"rank 1: in a collective for .* s: torch.distributed.barrier at .*allreduce_flags.py:{line}",
                     r0.err), r0.err[-2000:]
    assert rs[1].code not in (0, None), rs[1].err[-2000:]  # its barrier fails when rank 0 is gone


def test_a_rank_in_host_code_is_waited_for_until_the_timeout():
    """Rank 1 sleeps in host code: rank 0 cannot tell a slow rank from a stuck one, waits
    CUTELAB_WAIT_TIMEOUT_S, then stops with the report; rank 1 then fails too."""
    rs = run_ranks("allreduce_flags.py", 2, ["--elems", "128", "--plant", "rank1-sleeps"],
                   env={"CUTELAB_WAIT_TIMEOUT_S": "3"})
    r0 = rs[0]
    assert r0.code == 1, r0.err[-2000:]
    assert "DeadlockError: no progress: waited 3 s (CUTELAB_WAIT_TIMEOUT_S) while some rank is outside" in r0.err
    assert "rank 1: running (host code or a kernel)" in r0.err
    assert rs[1].code not in (0, None), rs[1].err[-2000:]


def test_missing_fence_is_a_race():
    """The signal is a relaxed store with no fence after the data stores: CUTELAB_RACECHECK=1 reports it."""
    rs = run_ranks("allreduce_flags.py", 2, ["--elems", "128", "--plant", "no-fence"], env=RACECHECK)
    signal = _line_of("allreduce_flags.py", 'sem="relaxed", scope="sys")')
    data = _line_of("allreduce_flags.py", "recvs[p][rank, i] = v")
    for r in rs:
        assert r.code == 1, r.err[-2000:]
        assert "RaceError: allreduce_kernel: race across ranks" in r.err, r.err[-2000:]
        assert "st.relaxed.sys.global.b32 on flags_0 at " in r.err  # the first signal: to rank 0
        assert f"allreduce_flags.py:{signal} is not ordered after" in r.err
        assert f"recvs_0 at {PROGRAMS}{os.sep}allreduce_flags.py:{data}" in r.err
    ok = _ok(run_ranks("allreduce_flags.py", 2, ["--elems", "128", "--plant", "no-fence"]))  # unchecked: it runs
    assert "results verified" in ok[0].out  # (the CPU is stronger than the GPU: only the check can see it)


@pytest.mark.parametrize("n", [2, 4])
def test_cutlass_all_reduce_simple(n):
    rs = _ok(run_ranks("all_reduce_simple.py", n, ["--M", "32", "--N", "128"], env=RACECHECK))
    assert "Results verified successfully!" in rs[0].out


@pytest.mark.parametrize("n", [2, 4])
def test_cutlass_all_reduce_one_shot_lamport(n):
    rs = _ok(run_ranks("all_reduce_one_shot_lamport.py", n, ["--M", "16", "--N", "128"], env=RACECHECK))
    assert "Results verified successfully!" in rs[0].out


def test_cutlass_all_gather_gemm():
    """CUTLASS's all-gather GEMM: a device barrier through the peers' counter addresses, then in a CUDA
    graph the local GEMM and gated GEMMs on one stream while another copies each peer's A shard
    (cuMemcpyDtoDAsync from its symmetric buffer) and releases the gate flag; checked against
    torch.einsum of the gathered A by the program itself (torch.testing.assert_close). A 2x2 cluster: the
    A and B tiles are multicast, each stage's empty barrier counts 3 releases (enable_multicast_signaling)."""
    rs = _ok(run_ranks("distributed_all_gather_gemm_blackwell.py", 2,
                       ["--mnkl", "256,64,32,1", "--mma_tiler_mn", "64,32", "--cluster_shape_mn", "2,2",
                        "--ab_dtype", "Float16", "--c_dtype", "Float16"], env=RACECHECK))
    for r in rs:
        assert r.out.splitlines()[-1] == "PASS", r.out[-2000:]


def test_multimem_ops():
    """Our own all-reduce over multicast tensors (nvshmem.core.get_multicast_tensor): multimem.ld_reduce of f32,
    f16, bf16 and e4m3 vectors, multimem.st, a barrier of multimem.red flags; checked against dist.all_reduce;
    a plain store to a multicast tensor is refused naming the kernel's line."""
    rs = _ok(run_ranks("multimem_ops.py", 2, ["--chunks", "64"], env=RACECHECK))
    lines = rs[0].out.splitlines()
    for name in ("Float32 x4", "Float16 x8", "BFloat16 x4", "Float8E4M3FN x16"):
        assert f"{name}: sums verified" in lines, rs[0].out
    line = _line_of("multimem_ops.py", "flag_mc[0] = cutlass.Int32(1)")
    assert "multimem_ops: 2 ranks, 64 chunks of 16 bytes per type: results verified" in lines
    refusal = next(x for x in lines if x.startswith("plain store:"))
    assert f"kernel plain_store_kernel (at {os.path.join(PROGRAMS, 'multimem_ops.py')}:{line}): a store to flag_mc, a " \
           f"multicast tensor, by st.global: a multicast address takes only multimem" in refusal, refusal


@pytest.mark.parametrize("program, mode", [
    ("distributed_gemm_reduce_scatter_blackwell.py", "Fused ReduceScatter Op: LDMC"),
    ("distributed_gemm_all_reduce_lamport_blackwell.py", "Fused AllReduce Op: Lamport"),
])
def test_cutlass_fused_gemms_with_multicast(program, mode):
    """CUTLASS's GEMMs fused with a reduce-scatter (multimem.ld_reduce of every rank's tile through the multicast
    view of the symmetric C, symm_mem's multicast_ptr, into this rank's shard; barriers of multimem.red flags) and
    with a Lamport all-reduce (a TMA store of each tile to the multicast slot reaches every rank's copy; each rank
    polls its peers' copies with ordered 128-bit loads in a while_generate loop until the -0.0 sentinel is gone);
    each checks itself against torch (PASS on every rank). The all-reduce siblings (LDMCxSTMC, LDxSTMC, the
    block-scaled one) and all_reduce_tma pass too (docs/cutlass_examples_survey.md); multimem.st is tested by
    test_multimem_ops, the 1-D TMA tile of all_reduce_tma by tests/kernel/test_sm90_tma.py."""
    rs = _ok(run_ranks(program, 2, ["--mnkl", "128,64,32,1", "--mma_tiler_mn", "64,64", "--cluster_shape_mn", "1,1",
                                    "--ab_dtype", "Float16", "--c_dtype", "Float16", "--use_tma_store"]))
    assert mode in rs[0].out, rs[0].out[-2000:]
    for r in rs:
        assert r.out.splitlines()[-1].startswith("PASS"), r.out[-2000:]


def test_torchrun_cli(tmp_path):
    """torchrun --nproc-per-node 2 --no-python cutelab run PROGRAM.py, as issue 22 writes it."""
    env = dict(os.environ, PYTHONPATH=SRC, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1")
    exe = tmp_path / "cutelab"  # the `cutelab` command of this checkout
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} -m cutelab \"$@\"\n")
    exe.chmod(0o755)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", str(_free_port()),
           "--no-python", str(exe), "run", os.path.join(PROGRAMS, "allreduce_flags.py"), "--elems", "128"]
    p = subprocess.run(cmd, cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=90)
    assert p.returncode == 0, p.stderr[-4000:]
    assert "allreduce_flags: 2 ranks, 128 elements: results verified" in p.stdout


def _line_of(program, text):
    with open(os.path.join(PROGRAMS, program)) as f:
        for i, line in enumerate(f, 1):
            if text in line:
                return i
    raise AssertionError(f"{text!r} not in {program}")


@pytest.mark.parametrize("n", [2, 4])
def test_tma_over_a_peers_buffer(n):
    """A tensor map over the next rank's symmetric buffer: each rank's kernel TMA-loads its peer's tiles into
    swizzled shared memory and writes them out; the program checks them against dist.all_gather."""
    rs = _ok(run_ranks("tma_peer_read.py", n, ["--M", "128", "--K", "128"], env=RACECHECK))
    assert f"tma_peer_read: {n} ranks, 128x128 f16, each read its next rank's buffer with TMA: results verified" \
        in rs[0].out
