"""benchmarks/ncu_profile.py without a GPU: parsing ncu's CSV, the side-by-side table, the CPU side."""

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _module():
    spec = importlib.util.spec_from_file_location("ncu_profile", os.path.join(ROOT, "benchmarks", "ncu_profile.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


CSV = '''==PROF== Connected to process 1234
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","1234","python","h","copy_kernel","1","7","(256, 1, 1)","(8192, 1, 1)","0","9.0","Command line profiler metrics","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","","262,144"
"0","1234","python","h","copy_kernel","1","7","(256, 1, 1)","(8192, 1, 1)","0","9.0","Command line profiler metrics","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","sector","4,194,304"
"1","1234","python","h","copy_kernel","1","7","(256, 1, 1)","(8192, 1, 1)","0","9.0","Command line profiler metrics","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","","99"
"2","1234","python","h","other(int)","1","7","(256, 1, 1)","(8192, 1, 1)","0","9.0","Command line profiler metrics","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","","5"
'''


def test_parse_first_launches():
    m = _module()
    got = m.parse_first_launches(CSV)
    assert got == {"copy_kernel": {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 262144.0,
                                   "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 4194304.0},
                   "other": {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 5.0}}
    assert m.parse_first_launches("no csv here") == {}


def test_compare_verdicts():
    m = _module()
    kernel = {"ncu": {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 262144.0,
                      "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 4194304.0,
                      "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": 100.0}}
    measured = {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 262144.0,
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 4194304.0 * 1.005,  # within 1%: ok
                "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": 150.0,  # DIFF
                "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum": 32 * 4194304.0}
    lines, bad = m.compare(kernel, measured)
    text = "\n".join(lines)
    assert bad == 1
    row = {ln.split()[0] + " " + ln.split()[1] + " " + ln.split()[2]: ln for ln in lines[1:]}
    assert row["global ld requests"].endswith("ok")
    assert row["global ld sectors"].endswith("ok") and "16.00 | 16.08" in row["global ld sectors"]
    assert row["global st requests"].endswith("DIFF")
    assert row["global ld bytes"].endswith("ok")
    assert "shared" not in text  # rows neither side has are left out
    lines, bad = m.compare(kernel, None)
    assert bad == 0 and all(ln.endswith("not measured") for ln in lines[1:])


def test_compare_folds_cp_async_and_ldmatrix_as_the_h100s_ncu_counts_them():
    # tensorop_gemm's default kernel, the H100 (2026-11-23): this ncu has no ldgsts metrics and counts cp.async in
    # the global load rows; its l1tex shared-load rows include ldmatrix's wavefronts (1,024 + 16,896 + 4 conflicts)
    m = _module()
    pred = {"l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum": 2048.0,
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum": 32768.0,
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 1024.0,
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 0.0,
            "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum": 16896.0,
            "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum": 0.0}
    measured = {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 2048.0,
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 32768.0,
                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 17924.0,
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 4.0,
                "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum": 16896.0,
                "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum": 0.0}
    lines, bad = m.compare({"ncu": pred}, measured)
    row = {" ".join(ln.split()[:3]): ln for ln in lines[1:] if not ln.lstrip().startswith("(")}
    assert row["global ld requests"].endswith("ok") and row["global ld sectors"].endswith("ok")
    assert "cp.async requests" not in row
    assert row["shared ld wavefronts"].endswith("ok")  # 17,920 against 17,924: within 1%
    assert row["shared ld conflicts"].endswith("DIFF")  # 0 against 4: more than the 1-count rounding
    assert bad == 1 and any("cp.async" in ln for ln in lines) and any("ldmatrix" in ln for ln in lines)


def test_dry_run_on_a_small_program(capsys, tmp_path):
    m = _module()
    prog = "examples/dsl/elementwise_add.py --M 64 --N 256"
    pred = str(tmp_path / "pred.json")
    rc = m.main(["--dry-run", "--no-defaults", "--program", prog, "--json", pred])
    out = capsys.readouterr().out
    assert rc == 0
    assert "kernel cutlass_dsl_elementwise_add_kernel" in out and "global ld sectors" in out
    # the saved predictions stand in for the CPU side of a later run (here again a dry run)
    rc = m.main(["--dry-run", "--no-defaults", "--program", prog, "--predicted", pred])
    again = capsys.readouterr().out
    assert rc == 0 and "running:" not in again
    rows = [ln for ln in out.splitlines() if "global ld" in ln]
    assert rows and [ln for ln in again.splitlines() if "global ld" in ln] == rows
