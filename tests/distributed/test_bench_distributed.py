"""benchmarks/distributed.py --smoke as 2 ranks on the CPU: every program (NCCL on gloo, our two all-reduces,
CUTLASS's simple and one-shot Lamport all-reduces, the fused GEMM and both unfused sequences) passes its check
and gets a row in the table; the exit status is 0. Its times mean nothing here."""
import os
import re

import pytest

from ranks import run_ranks

pytest.importorskip("torch.distributed")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "benchmarks", "distributed.py")


def test_smoke():
    rs = run_ranks(BENCH, 2, ["--smoke", "--sizes", "8K", "--rounds", "1"], timeout=180)
    for r in rs:
        assert r.code == 0, f"rank {r.rank} exit {r.code}\nstdout:\n{r.out[-3000:]}\nstderr:\n{r.err[-4000:]}"
    out = rs[0].out
    assert ("2 ranks on the CPU interpreter (cutelab's emulated device), kernels compiled by cutelab; "
            "medians of 1 rounds") in out
    for prog in ("nccl", "push", "simple", "lamport"):
        assert re.search(rf"^\| 8 KB \| {prog} \| \d+\.\d+ \| \d+\.\d+ \|", out, re.M), (prog, out[-3000:])
    assert re.search(r"^\| 8 KB \| flags \| - \(single launches only[^|]*\| \d+\.\d+ \|", out, re.M), out[-3000:]
    for prog in ("fused", "matmul\\+nccl", "sm90\\+nccl"):
        assert re.search(rf"^\| 128x128x64 \| {prog} \| \d+\.\d+ \| \d+\.\d+ \|", out, re.M), (prog, out[-3000:])
    assert "failed" not in out and "skipped" not in out


def test_a_failed_check_on_one_rank(tmp_path):
    """A program whose result is wrong on rank 1 only is reported as failed and timed on no rank (the timings
    meet in barriers: one rank timing alone would hang); the others are timed; the exit status is 1."""
    wrapper = tmp_path / "bench_wrong_on_rank1.py"
    wrapper.write_text(
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('bench_distributed', {BENCH!r})\n"
        "b = importlib.util.module_from_spec(spec); spec.loader.exec_module(b)\n"
        "def nccl_wrong_on_rank1(inp):\n"
        "    import torch.distributed as dist\n"
        "    fn, out, after = b._nccl(inp)\n"
        "    def wrong():\n"
        "        fn()\n"
        "        if dist.get_rank() == 1:\n"
        "            out.add_(1)\n"
        "    return wrong, out, after\n"
        "b._MAKERS['nccl'] = nccl_wrong_on_rank1\n"
        "sys.exit(b.main(sys.argv[1:]))\n")
    rs = run_ranks(str(wrapper), 2, ["--smoke", "--sizes", "8K", "--rounds", "1", "--only", "nccl,push"], timeout=120)
    assert [r.code for r in rs] == [1, 1], [(r.code, r.err[-2000:]) for r in rs]
    out = rs[0].out
    assert "| 8 KB | nccl | failed: on another rank |" in out, out[-2000:]
    assert re.search(r"^\| 8 KB \| push \| \d+\.\d+ \| \d+\.\d+ \|", out, re.M), out[-2000:]
    assert "AssertionError: Tensor-likes are not close!" in rs[1].err
