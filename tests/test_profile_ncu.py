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


def test_dry_run_on_a_small_program(capsys):
    m = _module()
    rc = m.main(["--dry-run", "--no-defaults", "--program", "examples/dsl/elementwise_add.py --M 64 --N 256"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "kernel cutlass_dsl_elementwise_add_kernel" in out and "global ld sectors" in out
