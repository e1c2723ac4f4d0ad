"""benchmarks/ncu_access.py without a GPU: --dry-run, the generated kernels, the ncu CSV parsing and
the whole measuring path against a fake ncu (a script that answers like ncu --csv would)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("ncu_access", ROOT / "benchmarks" / "ncu_access.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["ncu_access"] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_dry_run_prints_predictions_and_kernels(bench, capsys):
    assert bench.main(["--dry-run"]) == 0
    out = capsys.readouterr().out
    cases = bench.cases()
    assert len(cases) >= 10
    for c in cases:
        assert f"// ---- kernel {c.kernel}" in out and f"{c.name}: {c.what}" in out
    rows = {tuple(ln.split()[:4]): ln for ln in out.splitlines()
            if ln.startswith(("smem_", "ldsm_", "seed_", "gmem_", "probe_"))}
    assert ("probe_bcast_halves_64b", "wavefronts", "ld", "2") in rows
    assert ("smem_row_cols_128b", "conflicts", "ld", "28") in rows
    assert ("smem_sw128_cols_128b", "conflicts", "ld", "0") in rows
    assert ("ldsm_x4_row", "wavefronts", "ldsm", "512") in rows
    assert ("seed_inner_ldg", "sectors", "ld", "64") in rows


def test_cases_cover_the_brief(bench):
    names = [c.name for c in bench.cases()]
    for want in ("sw32", "sw64", "sw128", "_32b", "_64b", "_128b", "ldsm_x4", "seed_inner", "seed_outer", "seed_tv",
                 "smem_col_", "smem_row_"):
        assert any(want in n for n in names), want


def test_kernel_source_bakes_the_trace(bench):
    for c in bench.cases():
        src = bench.kernel_source(c)
        n = c.trace.num_instructions
        table = re.search(r"_off\[(\d+)\] = \{([^}]*)\}", src)
        assert int(table.group(1)) == 32 * n
        vals = [int(x) for x in table.group(2).split(",")]
        a = c.trace.addresses
        lo = int(a[a >= 0].min())
        base = lo - lo % 1024
        want = [int(x) - base if x >= 0 else 0xFFFFFFFF for x in a.reshape(-1)]
        assert vals == want  # the kernel makes exactly the analysed accesses, mod 1024 preserved
        if c.trace.op == "ldsm":
            assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in src
        else:
            op = {1: "u8", 2: "u16", 4: "u32", 8: "v2.u32", 16: "v4.u32"}[c.trace.bytes_per_lane]
            assert f"{c.trace.op}.{c.trace.space}.{op} " in src


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_generated_program_compiles(bench, tmp_path):
    cu = tmp_path / "acc.cu"
    cu.write_text(bench.nvcc_program(bench.cases()))
    for kind in ("-ptx", "-cubin"):  # -cubin: ptxas checks the inline PTX too
        p = subprocess.run(["nvcc", "-arch=sm_90", kind, "-o", str(tmp_path / f"acc{kind[1:]}"), str(cu)],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
    ptx = (tmp_path / "accptx").read_text()
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx and "st.shared.v4.u32" in ptx


CSV = textwrap.dedent('''\
    ==PROF== Connected to process 1
    "ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
    "0","1","python","h","acc_a","1","7","(32, 1, 1)","(1, 1, 1)","0","9.0","Command line profiler metrics","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","sector","1,024"
    "0","1","python","h","acc_a","1","7","(32, 1, 1)","(1, 1, 1)","0","9.0","Command line profiler metrics","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","","2"
    "1","1","python","h","acc_b(unsigned int *, const char *)","1","7","(32, 1, 1)","(1, 1, 1)","0","9.0","x","m","n/a"
    ''')


def test_parse_ncu_csv(bench):
    got = bench.parse_ncu_csv(CSV)
    assert got == {"acc_a": {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 1024.0,
                             "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 2.0}}
    assert bench.parse_ncu_csv("no csv here") == {}


FAKE_NCU = '''\
import re, sys
args = sys.argv[1:]
if "--query-metrics" in args:
    print("Device x\\nl1tex__t_sectors_pipe_lsu_mem_global_op_ld  Counter  sector  # of sectors")
    print("l1tex__t_requests_pipe_lsu_mem_global_op_ld  Counter")
    sys.exit(0)
import os
log = args[args.index("--log-file") + 1]
metrics = args[args.index("--metrics") + 1].split(",")
if "--only" in args:  # python ncu_access.py --launch --only a,b
    if os.environ.get("FAKE_NCU_FAIL_PYTHON"):
        print("==ERROR== the application returned an error code (1)")
        sys.exit(1)
    names = args[args.index("--only") + 1].split(",")
else:  # the nvcc-built executable: its kernels are in the .cu beside it
    names = [n[4:] for n in re.findall(r"__global__ void (acc_[A-Za-z0-9_]+)", open(args[-1] + ".cu").read())]
head = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
head += '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
rows = [head]
for i, n in enumerate(names):
    for m in metrics:
        v = {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 2, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 64}[m]
        if n == "seed_tv_ldg" and "sectors" in m:
            v = 65
        rows.append(f'"{i}","1","python","h","acc_{n}","1","7","(32, 1, 1)","(1, 1, 1)","0","9.0","s","{m}","","{v}"')
open(log, "w").write("\\n".join(rows) + "\\n")
'''


def test_measuring_path_with_a_fake_ncu(bench, tmp_path, monkeypatch, capsys):
    fake = tmp_path / "ncu"
    fake.write_text(f"#!{sys.executable}\n" + FAKE_NCU)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setattr(bench, "_have_cuda_python", lambda: True)
    rc = bench.main(["--only", "seed_inner,seed_tv"])
    out = capsys.readouterr().out
    assert rc == 1  # seed_tv's sectors differ in the fake
    lines = [ln.split() for ln in out.splitlines()]
    assert ["seed_inner_ldg", "sectors", "ld", "64", "64", "ok"] in lines
    assert ["seed_inner_ldg", "requests", "ld", "2", "2", "ok"] in lines
    assert ["seed_tv_ldg", "sectors", "ld", "64", "65", "DIFFERS"] in lines
    assert "1 case(s) match, 1 differ, 0 not measured (of 2; 0 probe(s) not scored)" in out


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_falls_back_to_nvcc_when_the_nvrtc_run_fails(bench, tmp_path, monkeypatch, capsys):
    fake = tmp_path / "ncu"
    fake.write_text(f"#!{sys.executable}\n" + FAKE_NCU)
    fake.chmod(0o755)
    monkeypatch.setenv("FAKE_NCU_FAIL_PYTHON", "1")
    monkeypatch.setattr(bench, "_have_cuda_python", lambda: True)
    rc = bench.main(["--only", "seed_inner", "--ncu", str(fake)])
    out = capsys.readouterr().out
    assert "ncu run failed (exit 1)" in out and "retrying: kernels by nvcc" in out
    assert rc == 0 and "1 case(s) match, 0 differ" in out


def test_no_ncu_says_so(bench, monkeypatch, capsys):
    monkeypatch.setattr(bench, "find_ncu", lambda *a: None)
    assert bench.main(["--only", "seed_inner"]) == 2
    assert "ncu (Nsight Compute) not found" in capsys.readouterr().err


def test_only_must_match(bench, capsys):
    assert bench.main(["--only", "nothing-like-this", "--dry-run"]) == 2
