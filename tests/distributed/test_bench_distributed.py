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
    assert "2 ranks on the CPU interpreter (cutelab's emulated device); medians of 1 rounds" in out
    for prog in ("nccl", "push", "simple", "lamport"):
        assert re.search(rf"^\| 8 KB \| {prog} \| \d+\.\d+ \| \d+\.\d+ \|", out, re.M), (prog, out[-3000:])
    assert re.search(r"^\| 8 KB \| flags \| - \(single launches only[^|]*\| \d+\.\d+ \|", out, re.M), out[-3000:]
    for prog in ("fused", "matmul\\+nccl", "sm90\\+nccl"):
        assert re.search(rf"^\| 128x128x64 \| {prog} \| \d+\.\d+ \| \d+\.\d+ \|", out, re.M), (prog, out[-3000:])
    assert "failed" not in out and "skipped" not in out
