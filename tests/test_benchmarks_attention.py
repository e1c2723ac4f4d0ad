"""benchmarks/attention.py without a GPU: its doctests (FLOPs, TFLOP/s, the shape grid, the table),
its arguments, and cutelab's kernel through cute.compile and the GPU launch path on a fake GPU."""

import doctest
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_attention", os.path.join(ROOT, "benchmarks", "attention.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_doctests(bench):
    res = doctest.testmod(bench)
    assert res.attempted >= 5 and res.failed == 0


def test_arguments(bench):
    o = bench.make_parser().parse_args([])
    assert o.seqlens == [1024, 4096, 8192, 16384] and o.dims == [64, 128] and (o.batch, o.heads) == (4, 16)
    assert len(bench.shapes(o)) == 16 and o.rounds >= 3
    assert not o.persistent and bench.make_parser().parse_args(["--persistent"]).persistent
    assert o.sdpa == ["default", "flash", "cudnn"]
    for bad in (["--seqlens", "1k"], ["--dims", "0"], ["--causal", "maybe"], ["--dtype", "f32"], ["--sdpa", "math"]):
        with pytest.raises(SystemExit):
            bench.make_parser().parse_args(bad)


def test_dry_run_compiles_and_launches(bench, capsys):
    pytest.importorskip("torch")
    assert bench.main(["--dry-run", "--seqlens", "1024", "--dims", "128", "--persistent"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and all('"ok": true' in line for line in out)
    assert '"launches": 2, "grid": [132, 1, 1]' in out[0]  # non-causal: also the persistent grid
    assert '"launches": 2, "grid": [132, 1, 1]' in out[1]  # causal too (the longest tiles first)


def test_variants_dry_run_compiles_and_launches(bench, capsys):
    """--variants: the three-warpgroup kernel (causal: its key loop's bound a runtime min, which the
    launch's bounds proofs must take), the one without the overlap and the one with the overlap's wait
    keepwait through the GPU launch path; wg3 is skipped for head dim 128."""
    pytest.importorskip("torch")
    assert bench.make_parser().parse_args(["--variants", "wg3,nooverlap"]).variants == ["wg3", "nooverlap"]
    with pytest.raises(SystemExit):
        bench.make_parser().parse_args(["--variants", "wg4"])
    assert bench.main(["--dry-run", "--seqlens", "1024", "--dims", "64,128", "--causal", "yes",
                       "--variants", "keepwait,nooverlap,wg3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and all('"ok": true' in line for line in out)
    assert '"launches": 4, "grid": [6, 64, 1]' in out[0]  # d64: cutelab, keepwait, nooverlap, wg3 (6 blocks of 192 rows)
    assert '"launches": 3, "grid": [8, 64, 1]' in out[1]  # d128: cutelab, keepwait, nooverlap


def test_backward_dry_run_compiles_and_launches(bench, capsys):
    """--backward: cutelab's forward (O, LSE) and the backward's three kernels through cute.compile and
    the GPU launch path: the last launch is the postprocess."""
    pytest.importorskip("torch")
    assert bench.make_parser().parse_args(["--backward"]).backward
    assert bench.main(["--dry-run", "--backward", "--seqlens", "1024", "--dims", "64", "--causal", "yes"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and '"ok": true' in out[0] and '"mode": "backward"' in out[0]
    # forward, preprocess, main, postprocess: 4*16*1024 rows, 16 rows per CTA (8 threads a row of 64)
    assert '"launches": 4, "grid": [4096, 1, 1]' in out[0]


def test_backward_table(bench):
    row = dict(b=4, h=16, s=1024, d=64, causal=False, dtype="bf16", mode="backward", ok=True, sdpa_best="sdpa-flash",
               cutelab_b2b_ms=1.0, cutelab_b2b_tflops=1.0, cutelab_single_ms=2.0, cutelab_single_tflops=0.5,
               sdpa_b2b_ms=0.5, sdpa_b2b_tflops=2.0, sdpa_single_ms=1.0, sdpa_single_tflops=1.0,
               cutelab_ratio_b2b=0.5, cutelab_ratio_single=0.5)
    lines = bench.table([row, dict(row, ok=False, cutelab_err_dq=0.5, cutelab_err_dk=0.0, cutelab_err_dv=0.0)],
                        "X").splitlines()
    assert lines[2] == ("| X | 4 16 1024 64 bf16 | no | cutelab backward | 1.000 ms, 1 TF/s | 0.500 ms, 2 TF/s | 0.50x | "
                        "2.000 ms, 0 TF/s | 1.000 ms, 1 TF/s | 0.50x | sdpa-flash |")
    assert lines[3].startswith("| X | 4 16 1024 64 bf16 | no | cutelab backward | FAILED check (rel err dQ 0.5,")


def test_backward_variants(bench):
    """--bwd-variant NAME=KEY:VALUE,...: each variant a program of its own, cutelab-NAME, in the table."""
    o = bench.make_parser().parse_args(["--backward", "--bwd-variant", "old=tile_m:64,order:dq_last,dq_writer:0",
                                        "--bwd-variant", "ps2=p_split:2"])
    assert o.bwd_variant == [("old", {"tile_m": 64, "order": "dq_last", "dq_writer": 0}), ("ps2", {"p_split": 2})]
    for bad in ("=tile_m:64", "x y=p_split:2", "old=tile_m"):
        with pytest.raises(SystemExit):
            bench.make_parser().parse_args(["--bwd-variant", bad])
    row = dict(b=4, h=16, s=1024, d=64, causal=True, dtype="bf16", mode="backward", ok=True, sdpa_best="sdpa",
               sdpa_b2b_ms=0.5, sdpa_b2b_tflops=2.0, sdpa_single_ms=1.0, sdpa_single_tflops=1.0)
    for p, ms in (("cutelab", 1.0), ("cutelab-old", 2.0)):
        row.update({f"{p}_b2b_ms": ms, f"{p}_b2b_tflops": 1 / ms, f"{p}_single_ms": ms, f"{p}_single_tflops": 1 / ms,
                    f"{p}_ratio_b2b": 0.5 / ms, f"{p}_ratio_single": 1 / ms, f"{p}_err_dq": 0.0, f"{p}_err_dk": 0.0,
                    f"{p}_err_dv": 0.0})
    lines = bench.table([row, dict(row, ok=False, **{"cutelab-old_err_dq": 0.5})], "X").splitlines()
    assert [line.split(" | ")[3] for line in lines[2:]] == ["cutelab backward", "cutelab-old backward"] * 2
    assert "0.25x" in lines[3] and "FAILED check (rel err dQ 0.5," in lines[5]
