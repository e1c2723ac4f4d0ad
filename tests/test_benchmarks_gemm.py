"""benchmarks/gemm.py without a GPU: its arguments, the check's tolerance, the child's records,
the table, the exit status, the import-only check, and cutelab's programs through the GPU launch
path under a fake GPU (--dry-run)."""

import argparse
import doctest
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def gemm():
    spec = importlib.util.spec_from_file_location("bench_gemm", os.path.join(ROOT, "benchmarks", "gemm.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_doctests(gemm):
    res = doctest.testmod(gemm)
    assert res.attempted >= 8 and res.failed == 0


def test_arguments(gemm):
    o = gemm.make_parser().parse_args([])
    assert o.sizes == [(8192, 8192, 8192), (4096, 4096, 4096)]
    assert o.dtypes == ["bf16", "f16"] and o.only == gemm.PROGRAMS
    assert o.dsl_hopper_clusters == [(1, 1), (2, 1)]
    o = gemm.make_parser().parse_args(["--sizes", "256x512x128", "--dtypes", "f16", "--only", "torch,sm90",
                                       "--dsl-hopper-clusters", "2x2"])
    assert o.sizes == [(256, 512, 128)] and o.dtypes == ["f16"] and o.only == ["torch", "sm90"]
    assert o.dsl_hopper_clusters == [(2, 2)]
    for bad in (["--dtypes", "f32"], ["--only", "cublas"], ["--sizes", "8192x8192"], ["--sizes", "0"],
                ["--sizes", "abc"], ["--dsl-hopper-clusters", "4x1"], ["--dtypes", ""]):
        with pytest.raises(SystemExit):
            gemm.make_parser().parse_args(bad)


def test_program_options(gemm):
    o = gemm.sm90_options("--ws --mma-wgs 2 --tile 128,256,64 --stages 4 --ctas 132")
    assert (o.ws, o.mma_wgs, o.tile, o.stages, o.ctas) == (True, 2, (128, 256, 64), 4, 132)
    o = gemm.sm90_options("")
    assert (o.ws, o.mma_wgs, o.tile, o.ctas) == (False, 1, (128, 256, 64), 0)
    with pytest.raises(SystemExit):
        gemm.sm90_options("--tile 128,256")
    o = gemm.sm90_options("--tile 256,128,64 --stages 4 --epi-cols 64 --cluster-n 2 --raster-m --k-unroll 4")
    assert (o.tile, o.epi_cols, o.cluster_n, o.cluster_m, o.raster_m, o.k_unroll) == ((256, 128, 64), 64, 2, 1, True, 4)
    with pytest.raises(SystemExit):
        gemm.sm90_options("--cluster-n 4")
    o = gemm.sm80_options("--bk 32 --stages 4")
    assert (o.bk, o.stages) == (32, 4)
    with pytest.raises(SystemExit):
        gemm.sm80_options("--bk 48")


def test_plan_order_and_commands(gemm):
    o = gemm.make_parser().parse_args(["--sizes", "512", "--dtypes", "bf16,f16", "--only", "sm90,dsl-hopper,torch",
                                       "--dsl-orig", "/x", "--dsl-python", "/dsl/python"])
    runs = gemm.plan(o)
    # per size and type: torch first (the base of the % column), then one dsl-hopper row per cluster
    assert [(r["dtype"], r["program"], r["cluster"]) for r in runs] == [
        ("bf16", "torch", None), ("bf16", "dsl-hopper", [1, 1]), ("bf16", "dsl-hopper", [2, 1]), ("bf16", "sm90", None),
        ("f16", "torch", None), ("f16", "dsl-hopper", [1, 1]), ("f16", "dsl-hopper", [2, 1]), ("f16", "sm90", None)]
    cmd = gemm.child_command(runs[1], o)
    assert cmd[0] == "/dsl/python" and cmd[2:7] == ["--child", "dsl-hopper", "512x512x512", "bf16", "1x1"]
    assert "--dsl-orig" in cmd
    assert gemm.child_command(runs[3], o)[0] != "/dsl/python"
    # the child parses what the parent passes
    back = gemm.make_parser().parse_args(cmd[2:])
    assert back.child == ["dsl-hopper", "512x512x512", "bf16", "1x1"] and back.sm90_args == o.sm90_args
    o = gemm.make_parser().parse_args(["--sm90-args=--ws", "--sm80-args=--stages 4"])  # one flag: no space in it
    back = gemm.make_parser().parse_args(gemm.child_command(gemm.plan(o)[0], o)[2:])
    assert (back.sm90_args, back.sm80_args) == ("--ws", "--stages 4")


def test_tolerance_accepts_rounding_and_catches_a_missing_k_tile(gemm):
    torch = pytest.importorskip("torch")
    M = N = 64
    K = 512
    for dtype, tdt in (("bf16", torch.bfloat16), ("f16", torch.float16)):
        a, b = gemm.make_data(M, N, K, dtype, "cpu", seed=3)
        ref = a.float() @ b.float().t()
        tol = gemm.tolerance(dtype, ref.abs().max().item())
        good = ref.to(tdt).float()  # the exact product rounded to the output type
        assert (good - ref).abs().max().item() <= tol
        short = (a[:, 64:].float() @ b[:, 64:].float().t()).to(tdt).float()  # one 64-wide k-tile left out
        assert (short - ref).abs().max().item() > tol
        swapped = ref.t().contiguous()  # a transposed C
        assert (swapped - ref).abs().max().item() > tol
    # the same random data in every process: the generator is seeded
    a1, _ = gemm.make_data(8, 8, 16, "f16", "cpu", seed=0)
    a2, _ = gemm.make_data(8, 8, 16, "f16", "cpu", seed=0)
    assert torch.equal(a1, a2) and a1.abs().max().item() < 3
    assert not torch.equal(a1, gemm.make_data(8, 8, 16, "f16", "cpu", seed=1)[0])


def test_child_output(gemm):
    ok = gemm.parse_child_output('compiling\nGEMM {"passed": true, "max_err": 0.01, "tol": 0.05, "c_dtype": "bf16"}\n'
                                 'BENCH {"b2b_us": 1400.0, "single_us": 1500.0, "iterations": 100}\n', 0, 3.0)
    assert ok["ok"] and ok["b2b_us"] == 1400.0 and ok["c_dtype"] == "bf16" and "why" not in ok
    bad = gemm.parse_child_output('GEMM {"passed": false, "max_err": 3.5, "tol": 0.05}\nsomething\n', 1)
    assert not bad["ok"] and bad["why"] == "max |C - torch| 3.5 > 0.05"
    crash = gemm.parse_child_output("Traceback (most recent call last):\nValueError: tile too big\n", 1)
    assert not crash["ok"] and crash["why"] == "ValueError: tile too big"
    untimed = gemm.parse_child_output('GEMM {"passed": true, "max_err": 0.0}\n', 0)
    assert not untimed["ok"]  # passed its check but printed no timing


def test_table_ratios_and_exit(gemm):
    mnk = [8192, 8192, 8192]
    rows = [dict(program="torch", mnk=mnk, dtype="bf16", c_dtype="bf16", ok=True, b2b_us=1375.0, single_us=1500.0,
                 max_err=0.01, config="torch.matmul (cuBLAS)"),
            dict(program="sm90", mnk=mnk, dtype="bf16", c_dtype="f32", ok=True, b2b_us=2750.0, single_us=3000.0,
                 max_err=1e-5, config="tile 128x256x64"),
            dict(program="sm80", mnk=mnk, dtype="bf16", ok=False, passed=False, why="max |C - torch| 3 > 0.05",
                 max_err=3.0),
            dict(program="dsl-hopper", mnk=mnk, dtype="bf16", ok=False, skipped=True, why="no --dsl-orig folder")]
    gemm.add_ratios(rows)
    assert round(rows[0]["tflops_b2b"], 1) == 799.6 and rows[0]["pct_cublas_b2b"] == 100.0
    assert rows[1]["pct_cublas_b2b"] == pytest.approx(50.0) and rows[1]["pct_cublas_single"] == pytest.approx(50.0)
    assert rows[2]["tflops_b2b"] is None and rows[2]["pct_cublas_b2b"] is None
    md = gemm.markdown(rows).splitlines()
    assert len(md) == 2 + len(rows) and all(line.count(" | ") == 9 for line in md[2:])
    assert md[3] == ("| 8192x8192x8192 | bf16 | f32 | sm90 | tile 128x256x64 | 399.8 | 366.5 | 50.0 / 50.0 | 1e-05 "
                     "| pass |")
    assert md[4].endswith("| 3 | FAIL: max \\|C - torch\\| 3 > 0.05 |")
    assert md[5].endswith("| skipped: no --dsl-orig folder |")
    assert gemm.exit_status(rows) == 1
    assert gemm.exit_status(rows[:2] + rows[3:]) == 0
    assert gemm.exit_status(rows[3:]) == 2
    assert gemm.exit_status(rows[2:]) == 1


def test_a_repeated_size_compares_each_row_with_its_own_torch_row(gemm):
    mnk = [4096, 4096, 4096]
    row = lambda program, us: dict(program=program, mnk=mnk, dtype="bf16", ok=True, b2b_us=us, single_us=us)  # noqa: E731
    rows = [row("torch", 200.0), row("sm90", 400.0), row("torch", 100.0), row("sm90", 100.0)]
    gemm.add_ratios(rows)
    assert rows[1]["pct_cublas_b2b"] == pytest.approx(50.0)  # against the first torch row, not the last
    assert rows[3]["pct_cublas_b2b"] == pytest.approx(100.0)


def test_no_gpu_exits_2_with_skip_notes(gemm, capsys, monkeypatch):
    monkeypatch.setattr(gemm, "probe", lambda opts: {"gpu": "no CUDA GPU (test)", "dsl": None})
    assert gemm.main(["--sizes", "256", "--dtypes", "f16"]) == 2
    out = capsys.readouterr().out
    assert "skipped: no CUDA GPU (test)" in out
    assert out.count("| skipped: no CUDA GPU (test) |") == len(gemm.PROGRAMS) + 1  # two dsl-hopper clusters


def test_import_only_check_of_the_dsl_original(gemm, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(gemm, "probe", lambda opts: {"gpu": "no CUDA GPU (test)", "dsl": None})
    ours = open(os.path.join(ROOT, "examples", "dsl", "tensorop_gemm.py")).read()
    theirs = ours.replace("import cutelab as cutlass", "import cutlass").replace("import cutelab as cute",
                                                                                 "import cutlass.cute as cute")
    (tmp_path / "tensorop_gemm.py").write_text(theirs)
    gemm.main(["--sizes", "256", "--dtypes", "f16", "--only", "dsl-ampere", "--dsl-orig", str(tmp_path)])
    assert "lines differing from CuTe DSL's beyond imports: 0" in capsys.readouterr().out
    (tmp_path / "tensorop_gemm.py").write_text(theirs.replace("self.num_stages = 4", "self.num_stages = 3"))
    gemm.main(["--sizes", "256", "--dtypes", "f16", "--only", "dsl-ampere", "--dsl-orig", str(tmp_path)])
    out = capsys.readouterr().out
    assert "beyond imports: 2" in out  # the line as CuTe DSL has it and as ours has it
    assert "-        self.num_stages = 3" in out and "+        self.num_stages = 4" in out


def test_dsl_rows_skipped_without_their_files(gemm, tmp_path):
    o = gemm.make_parser().parse_args(["--dsl-orig", str(tmp_path)])
    have = {"gpu": None, "dsl": None}
    assert gemm.skip_reason("dsl-hopper", o, have) == f"no dense_gemm.py in {tmp_path}"
    assert gemm.skip_reason("sm90", o, have) is None
    (tmp_path / "dense_gemm.py").write_text("")
    assert gemm.skip_reason("dsl-hopper", o, dict(have, dsl="no DSL")) == "no DSL"
    assert gemm.skip_reason("dsl-ampere", gemm.make_parser().parse_args([]), have) == "no --dsl-orig folder"


def test_dry_run_launches_our_gemms_on_a_fake_gpu(gemm, capsys):
    pytest.importorskip("torch")
    o = gemm.make_parser().parse_args(["--sizes", "256x512x128", "--dtypes", "bf16"])
    rows = gemm.dry_run(["torch", "sm80", "sm90"], o.sizes, o.dtypes, o)
    by = {r["program"]: r for r in rows}
    assert by["torch"]["skipped"] and not by["torch"]["ok"]
    for p in ("sm80", "sm90"):
        assert by[p]["ok"], by[p].get("why")
        assert by[p]["launches"] >= 1
    assert by["sm80"]["config"].startswith("tile 128x128x64, 3 stages")
    assert "2 MMA warpgroups" in by["sm90"]["config"]
    # a size the kernel's tile does not divide: the row reports sm80_gemm's own error
    bad = gemm.dry_run(["sm80"], [(200, 256, 128)], ["f16"], o)
    assert not bad[0]["ok"] and bad[0]["why"]


def test_main_with_stand_in_children(gemm, capsys, monkeypatch, tmp_path):
    """The parent's whole flow, each child answered by a stand-in: the table, the % column, the JSON."""
    monkeypatch.setattr(gemm, "probe", lambda opts: {"gpu": None, "dsl": None})
    us = {"torch": 1400.0, "sm80": 2800.0, "sm90": 1750.0}
    seen = []

    def child(cmd, env, timeout):
        program, mnk, dtype = cmd[3], cmd[4], cmd[5]
        seen.append((program, mnk, dtype))
        if program == "sm80":
            out = 'GEMM {"passed": false, "max_err": 2.5, "tol": 0.05, "c_dtype": "bf16", "config": "x"}\n'
            return gemm.parse_child_output(out, 1)
        out = (f'GEMM {{"passed": true, "max_err": 0.01, "tol": 0.05, "c_dtype": "bf16", "config": "c-{program}", '
               f'"device": "NVIDIA H100 80GB HBM3", "torch": "2.9"}}\n'
               f'BENCH {{"b2b_us": {us[program]}, "single_us": {us[program] + 100}, "iterations": 100}}\n')
        return gemm.parse_child_output(out, 0)

    monkeypatch.setattr(gemm, "run_child", child)
    js = tmp_path / "rows.json"
    rc = gemm.main(["--sizes", "8192", "--dtypes", "bf16", "--only", "sm90,sm80,torch", "--json", str(js)])
    out = capsys.readouterr().out
    assert seen == [("torch", "8192x8192x8192", "bf16"), ("sm80", "8192x8192x8192", "bf16"),
                    ("sm90", "8192x8192x8192", "bf16")]
    assert rc == 1  # sm80 failed its check
    assert "NVIDIA H100 80GB HBM3" in out and "torch 2.9" in out
    assert "| 8192x8192x8192 | bf16 | bf16 | sm90 | c-sm90 | 628.3 | 594.3 | 80.0 / 81.1 | 0.01 | pass |" in out
    assert "| sm80 | x | - | - | - | 2.5 | FAIL: max \\|C - torch\\| 2.5 > 0.05 |" in out
    import json

    rows = json.loads(js.read_text())
    assert [r["program"] for r in rows] == ["torch", "sm80", "sm90"] and rows[2]["pct_cublas_b2b"] == 80.0


def test_e4m3_rows_torch_scaled_mm_and_sm90_only(gemm, capsys, monkeypatch):
    """--dtypes e4m3: torch (torch._scaled_mm) and sm90 measured, the programs without an fp8 version listed as
    skipped; the child gets the fp8 flags; three rounds alternate, skipped rows listed once."""
    o = gemm.make_parser().parse_args(["--dtypes", "e4m3", "--sizes", "4096", "--rounds", "3",
                                       "--sm90-fp8-args=--ws --stages 4", "--scaled-mm-accum", "precise"])
    have = {"gpu": None, "dsl": None}
    assert gemm.skip_reason("sm80", o, have, "e4m3") == "no e4m3 version"
    assert gemm.skip_reason("sm90", o, have, "e4m3") is None and gemm.skip_reason("sm80", o, have, "bf16") is None
    assert gemm.skip_reason("dsl-hopper", o, have, "e4m3") == "no --dsl-orig folder"  # it has an fp8 version
    back = gemm.make_parser().parse_args(gemm.child_command(gemm.plan(o)[0], o)[2:])
    assert (back.sm90_fp8_args, back.fp8_c_dtype, back.scaled_mm_accum) == ("--ws --stages 4", "bf16", "precise")
    monkeypatch.setattr(gemm, "probe", lambda opts: {"gpu": None, "dsl": None})
    seen = []

    def child(cmd, env, timeout):
        program = cmd[3]
        seen.append(program)
        us = {"torch": 1000.0, "sm90": 800.0 + 100 * len(seen)}[program]
        return gemm.parse_child_output(f'GEMM {{"passed": true, "max_err": 0.01, "c_dtype": "bf16"}}\n'
                                       f'BENCH {{"b2b_us": {us}, "single_us": {us}, "iterations": 100}}\n', 0)

    monkeypatch.setattr(gemm, "run_child", child)
    assert gemm.main(["--dtypes", "e4m3", "--sizes", "4096", "--rounds", "3", "--only", "torch,sm80,sm90"]) == 0
    out = capsys.readouterr().out
    assert seen == ["torch", "sm90"] * 3
    assert out.count("| skipped: no e4m3 version |") == 1
    # sm90 took 1000, 1200, 1400 us against torch's 1000: 100, 83.3, 71.4 % of its round's torch row
    assert "| 4096x4096x4096 | e4m3 | sm90 |  | 3 | 114.5 | 114.5 | 83.3 (71.4-100.0) | 83.3 (71.4-100.0) |" in out


def test_dry_run_e4m3_through_the_fake_gpu(gemm):
    pytest.importorskip("torch")
    o = gemm.make_parser().parse_args(["--sizes", "256x512x256", "--dtypes", "e4m3"])
    rows = gemm.dry_run(["torch", "sm80", "sm90"], o.sizes, o.dtypes, o)
    by = {r["program"]: r for r in rows}
    assert by["sm90"]["ok"], by["sm90"].get("why")
    assert "tile 128x256x128" in by["sm90"]["config"] and "per-tensor scales" in by["sm90"]["config"]
    assert by["sm80"]["why"] == "no e4m3 version" and by["torch"]["skipped"]


def test_sm90_variants_one_row_each_against_the_same_torch_row(gemm, capsys, monkeypatch):
    """--sm90-variant ARGS (given twice): two sm90 rows per size, each right after the size's torch row in every
    round, the child getting that variant's flags (for 16-bit and e4m3 rows alike); the medians table keeps them
    apart by their flags. The dry run builds each variant on the fake GPU."""
    o = gemm.make_parser().parse_args(["--sizes", "4096", "--dtypes", "bf16", "--only", "torch,sm90",
                                       "--sm90-variant=--ws --epilogue smem", "--sm90-variant=--ws --no-defer"])
    runs = gemm.plan(o)
    assert [(r["program"], r.get("variant")) for r in runs] == [
        ("torch", None), ("sm90", "--ws --epilogue smem"), ("sm90", "--ws --no-defer")]
    back = gemm.make_parser().parse_args(gemm.child_command(runs[2], o)[2:])
    assert back.sm90_args == back.sm90_fp8_args == "--ws --no-defer"
    assert gemm.sm90_options(back.sm90_args).no_defer and gemm.sm90_options("--epilogue tma").epilogue == "tma"
    monkeypatch.setattr(gemm, "probe", lambda opts: {"gpu": None, "dsl": None})
    seen = []

    def child(cmd, env, timeout):
        program, args = cmd[3], next(a for a in cmd if a.startswith("--sm90-args="))
        seen.append((program, args))
        us = {"torch": 1000.0, "--sm90-args=--ws --epilogue smem": 1250.0, "--sm90-args=--ws --no-defer": 800.0}
        t = us[args] if program == "sm90" else us["torch"]
        return gemm.parse_child_output(f'GEMM {{"passed": true, "max_err": 0.01, "c_dtype": "bf16", "config": "c"}}\n'
                                       f'BENCH {{"b2b_us": {t}, "single_us": {t}, "iterations": 100}}\n', 0)

    monkeypatch.setattr(gemm, "run_child", child)
    assert gemm.main(["--sizes", "4096", "--dtypes", "bf16", "--only", "torch,sm90", "--rounds", "2",
                      "--sm90-variant=--ws --epilogue smem", "--sm90-variant=--ws --no-defer"]) == 0
    out = capsys.readouterr().out
    assert [p for p, _ in seen] == ["torch", "sm90", "sm90"] * 2
    assert "| 4096x4096x4096 | bf16 | sm90 `--ws --epilogue smem` |  | 2 | 110.0 | 110.0 | 80.0 (80.0-80.0) |" in out
    assert "| 4096x4096x4096 | bf16 | sm90 `--ws --no-defer` |  | 2 | 171.8 | 171.8 | 125.0 (125.0-125.0) |" in out
    pytest.importorskip("torch")
    o = gemm.make_parser().parse_args(["--sizes", "256x512x128", "--dtypes", "bf16",
                                       "--sm90-variant=--ws --mma-wgs 2 --tile 128,256,64 --stages 2 --epilogue smem",
                                       "--sm90-variant=--ws --mma-wgs 2 --tile 128,256,64 --stages 2"])
    rows = gemm.dry_run(["sm90"], o.sizes, o.dtypes, o)
    assert [r["ok"] for r in rows] == [True, True], [r.get("why") for r in rows]
    assert "smem epilogue" in rows[0]["config"] and "tma, deferred epilogue" in rows[1]["config"]
