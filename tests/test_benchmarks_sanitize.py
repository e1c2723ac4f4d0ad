"""benchmarks/sanitize.py without a GPU: the summary parser on compute-sanitizer's outputs, the
verdicts, the table, the program list, and that nothing is called clean where nothing ran."""

import doctest
import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def san():
    spec = importlib.util.spec_from_file_location("bench_sanitize", os.path.join(ROOT, "benchmarks", "sanitize.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


# compute-sanitizer outputs in the format it prints, program output interleaved (written here after
# its documented summary lines, not captured on a GPU: this machine has none)
MEMCHECK_CLEAN = """========= COMPUTE-SANITIZER
Compilation time: 0.8123 seconds
max relative error 1.221e-04 (tolerance 3.125e-02)
Results verified successfully!
PASS
========= ERROR SUMMARY: 0 errors
"""

MEMCHECK_ERRORS = """========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 16 bytes
=========     at kernel_cutelab_0+0x1a30
=========     by thread (127,0,0) in block (3,0,0)
=========     Address 0x7f0c2a000100 is out of bounds
=========     and is 256 bytes after the nearest allocation at 0x7f0c29ff0000 of size 65536 bytes
=========
========= Invalid __global__ read of size 16 bytes
=========     at kernel_cutelab_0+0x1a30
=========     by thread (126,0,0) in block (3,0,0)
=========
========= Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call to cudaDeviceSynchronize.
Traceback (most recent call last):
RuntimeError: CUDA error: unspecified launch failure
========= ERROR SUMMARY: 3 errors
"""

RACECHECK_CLEAN = """========= COMPUTE-SANITIZER
PASS
========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)
"""

RACECHECK_HAZARDS = """========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at kernel_cutelab_0+0x2f80
=========     and Read access at kernel_cutelab_0+0x3100 [512 hazards]
=========
========= Warning: Race reported between Read access at kernel_cutelab_0+0x3100
=========     and Write access at kernel_cutelab_0+0x2f80 [64 hazards]
=========
PASS
========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)
"""

SYNCCHECK_ERROR = """========= COMPUTE-SANITIZER
========= Barrier error detected. Divergent thread(s) in warp
=========     at kernel_cutelab_0+0x4d0
=========     by thread (0,0,0) in block (0,0,0)
=========
PASS
========= ERROR SUMMARY: 1 error
"""

NO_SUMMARY = """========= COMPUTE-SANITIZER
========= Error: Target application terminated before first instrumented API call
Traceback (most recent call last):
ModuleNotFoundError: No module named 'torch'
"""


def test_doctests(san):
    res = doctest.testmod(san)
    assert res.attempted >= 8 and res.failed == 0


def test_parse_summary(san):
    assert san.parse_summary("memcheck", MEMCHECK_CLEAN) == {"errors": 0}
    assert san.parse_summary("memcheck", MEMCHECK_ERRORS) == {"errors": 3}
    assert san.parse_summary("synccheck", SYNCCHECK_ERROR) == {"errors": 1}
    assert san.parse_summary("racecheck", RACECHECK_CLEAN) == {"hazards": 0, "errors": 0, "warnings": 0}
    assert san.parse_summary("racecheck", RACECHECK_HAZARDS) == {"hazards": 2, "errors": 1, "warnings": 1}
    for tool in san.TOOLS:
        assert san.parse_summary(tool, NO_SUMMARY) is None
    # racecheck's verdict is its own summary line, not an ERROR SUMMARY line
    assert san.parse_summary("racecheck", MEMCHECK_CLEAN) is None
    # two processes: the counts add up
    assert san.parse_summary("memcheck", MEMCHECK_CLEAN + MEMCHECK_ERRORS) == {"errors": 3}
    with pytest.raises(ValueError, match="unknown tool 'initchek'"):
        san.parse_summary("initchek", MEMCHECK_CLEAN)


def test_judge(san):
    assert san.judge("memcheck", MEMCHECK_CLEAN, 0) == {"counts": {"errors": 0}, "returncode": 0, "clean": True,
                                                        "cell": "0"}
    r = san.judge("memcheck", MEMCHECK_ERRORS, 1)
    assert not r["clean"] and r["cell"] == "3 errors"
    assert san.judge("synccheck", SYNCCHECK_ERROR, 0)["cell"] == "1 error"
    r = san.judge("racecheck", RACECHECK_HAZARDS, 0)
    assert not r["clean"] and r["cell"] == "2 hazards (1 error, 1 warning)"
    assert san.judge("racecheck", RACECHECK_CLEAN, 0)["clean"]
    # the sanitizer saw nothing wrong but the program failed its own check: not clean
    r = san.judge("memcheck", "Traceback\nAssertionError: mismatch\n========= ERROR SUMMARY: 0 errors\n", 1)
    assert not r["clean"] and r["cell"] == "failed to run (exit 1: AssertionError: mismatch)"
    r = san.judge("memcheck", NO_SUMMARY, 1)
    assert not r["clean"] and r["cell"].startswith("failed to run (no summary; exit 1: ModuleNotFoundError")
    r = san.judge("racecheck", "", None, timed_out=True)
    assert not r["clean"] and r["cell"] == "timed out"


def test_run_one_with_a_stand_in_sanitizer(san, tmp_path):
    # a "sanitizer" that prints a summary: run_one captures, judges and logs it
    out = "PASS\n========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"
    cmd = [sys.executable, "-c", f"print({out!r})"]
    r = san.run_one("p", "racecheck", cmd, dict(os.environ), 60, str(tmp_path))
    assert not r["clean"] and r["cell"] == "1 hazard (1 error, 0 warnings)" and os.path.exists(r["log"])
    r = san.run_one("p", "memcheck", [sys.executable, "-c", "import time; time.sleep(5)"], dict(os.environ), 1, None)
    assert not r["clean"] and r["cell"] == "timed out"


def test_programs_and_commands(san):
    for name, argv in san.PROGRAMS.items():
        assert os.path.exists(os.path.join(ROOT, argv[0])), name
    # every example the issues name is covered: the four Ampere examples, both GEMMs, every seed, attention
    files = {argv[0] for argv in san.PROGRAMS.values()}
    for folder in ("examples/dsl", "examples/gemm", "examples/seeds", "examples/attention"):
        for f in os.listdir(os.path.join(ROOT, folder)):
            if f.endswith(".py"):
                assert f"{folder}/{f}" in files, f
    assert all("--gpu" in argv for argv in san.PROGRAMS.values() if "sm90_gemm" in argv[0])
    cmd = san.command("/cs", "synccheck", san.PROGRAMS["gemm/sm80_gemm"], "/py")
    assert cmd[:6] == ["/cs", "--tool", "synccheck", "--report-api-errors", "no", "/py"]
    assert cmd[6] == os.path.join(ROOT, "examples/gemm/sm80_gemm.py") and cmd[7:9] == ["--mnk", "256,256,256"]
    assert san.select("seeds/") == [n for n in san.PROGRAMS if n.startswith("seeds/")]
    with pytest.raises(SystemExit):
        san.select("nonesuch")


def test_table(san):
    results = [{"program": "a", "tool": "memcheck", "cell": "0"}, {"program": "a", "tool": "racecheck", "cell": "3 hazards"},
               {"program": "b", "tool": "memcheck", "cell": "failed to run (exit 1: x)"}]
    assert san.table(results, ["a", "b"], ["memcheck", "racecheck"]).splitlines() == [
        "| program | memcheck | racecheck |", "|---|---|---|", "| a | 0 | 3 hazards |",
        "| b | failed to run (exit 1: x) | - |"]


def test_main_dry_run_and_nothing_clean_without_a_gpu(san, capsys, monkeypatch, tmp_path):
    assert san.main(["--dry-run", "--tools", "memcheck,racecheck"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 * len(san.PROGRAMS)
    assert all("--report-api-errors no" in line for line in lines)
    with pytest.raises(SystemExit):
        san.main(["--tools", "memchek"])
    assert san.main(["--sanitizer", str(tmp_path / "missing")]) == 2
    # a sanitizer is there but no GPU: the programs would run on the CPU, with no kernel to check
    fake = tmp_path / "compute-sanitizer"
    fake.write_text("#!/bin/sh\necho '========= ERROR SUMMARY: 0 errors'\n")
    fake.chmod(0o755)
    monkeypatch.setattr(san, "no_gpu", lambda: "no CUDA GPU (test)")
    assert san.main(["--sanitizer", str(fake)]) == 2
    assert "no CUDA GPU (test): nothing run" in capsys.readouterr().out


def test_main_runs_and_exits_1_on_a_hazard(san, capsys, monkeypatch, tmp_path):
    fake = tmp_path / "compute-sanitizer"  # a stand-in: racecheck reports a hazard, the others are clean
    fake.write_text("#!/bin/sh\nif [ \"$2\" = racecheck ]; then\n"
                    "  echo '========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)'\n"
                    "else\n  echo '========= ERROR SUMMARY: 0 errors'\nfi\n")
    fake.chmod(0o755)
    monkeypatch.setattr(san, "no_gpu", lambda: None)
    js = tmp_path / "r.json"
    assert san.main(["--sanitizer", str(fake), "--only", "tv_layout", "--json", str(js)]) == 1
    out = capsys.readouterr().out
    assert "| seeds/tv_layout_printf | 0 | 1 hazard (1 error, 0 warnings) | 0 |" in out
    assert san.main(["--sanitizer", str(fake), "--only", "tv_layout", "--tools", "memcheck,synccheck"]) == 0


def test_a_timed_out_run_ends_its_whole_process_group(san, tmp_path):
    # a stand-in "sanitizer" whose target (a grandchild) would outlive it: both end at the timeout
    pidfile = tmp_path / "pid"
    script = tmp_path / "cs.sh"
    script.write_text(f"#!/bin/sh\n{sys.executable} -c 'import os, time; open(\"{pidfile}\", \"w\").write(str(os.getpid())); "
                      "time.sleep(60)' &\nwait\n")
    script.chmod(0o755)
    r = san.run_one("p", "memcheck", [str(script)], dict(os.environ), 2, None)
    assert r["cell"] == "timed out" and not r["clean"]
    import time

    pid = int(pidfile.read_text())
    def gone() -> bool:  # ended: no such process, or a zombie waiting for whoever reaps orphans
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
        except FileNotFoundError:
            return True

    for _ in range(50):  # the kill is delivered at once; the process may take a moment to go
        if gone():
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the grandchild {pid} outlived the timeout")
