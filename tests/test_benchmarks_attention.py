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
    for bad in (["--seqlens", "1k"], ["--dims", "0"], ["--causal", "maybe"], ["--dtype", "f32"]):
        with pytest.raises(SystemExit):
            bench.make_parser().parse_args(bad)


def test_dry_run_compiles_and_launches(bench, capsys):
    pytest.importorskip("torch")
    assert bench.main(["--dry-run", "--seqlens", "1024", "--dims", "128", "--causal", "yes"]) == 0
    out = capsys.readouterr().out
    assert '"ok": true' in out and '"grid": [8, 64, 1]' in out
