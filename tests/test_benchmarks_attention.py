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
    assert '"launches": 1, "grid": [8, 64, 1]' in out[1]  # causal: one CTA per query block and head
