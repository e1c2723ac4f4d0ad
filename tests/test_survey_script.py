"""scripts/survey_cutlass_examples.py's verdicts for one program: a program past --cpu-timeout is a TIMEOUT
(whether or not /usr/bin/time's count of its CPU seconds reaches the limit), and one that prints a line starting
with FAIL fails although it exits 0."""

import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "survey_cutlass_examples.py")


@pytest.fixture(scope="module")
def survey():
    spec = importlib.util.spec_from_file_location("survey_cutlass_examples", SCRIPT)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


@pytest.fixture
def src_on_path(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.path.join(ROOT, "src"))


def test_cpu_limit_is_a_timeout(survey, tmp_path, src_on_path):
    (tmp_path / "spin.py").write_text("while True:\n    pass\n")
    r = survey.run_one(str(tmp_path), "spin.py", timeout=120, cpu_timeout=4)
    assert r["result"] == "TIMEOUT" and r["why"] == "over 4 CPU s", r


def test_sigxcpu_under_the_counted_seconds_is_a_timeout(survey, tmp_path, src_on_path):
    # the kernel's SIGXCPU decides, not the CPU seconds /usr/bin/time reports (they came out 117.4 for a 120 s limit)
    (tmp_path / "xcpu.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)\n")
    r = survey.run_one(str(tmp_path), "xcpu.py", timeout=120, cpu_timeout=60)
    assert r["result"] == "TIMEOUT" and r["why"] == "over 60 CPU s", r


def test_fail_line_fails(survey, tmp_path, src_on_path):
    (tmp_path / "prog.py").write_text("print('FAIL: 1 != 2')\n")
    r = survey.run_one(str(tmp_path), "prog.py", timeout=120)
    assert r["result"] == "FAIL" and r["why"] == "exit 0, printed FAIL", r


def test_a_program_that_raises_on_purpose_passes_only_with_its_error(survey, tmp_path, src_on_path, monkeypatch):
    monkeypatch.setitem(survey.INTENDED_ERRORS, "demo.py", r"ValueError: .*argument 0")
    (tmp_path / "demo.py").write_text("raise ValueError('add_one: argument 0 does not match')\n")
    r = survey.run_one(str(tmp_path), "demo.py", timeout=120)
    assert r["result"] == "PASS" and r["why"].startswith("raised as the program intends: ValueError"), r
    (tmp_path / "demo.py").write_text("raise KeyError('something else')\n")
    r = survey.run_one(str(tmp_path), "demo.py", timeout=120)
    assert r["result"] == "FAIL" and "KeyError" in r["why"], r


def test_a_program_that_loads_an_export_runs_after_the_one_that_writes_it(survey):
    names = ["dsl_tutorials/export/export_to_c.py", "dsl_tutorials/export/load_in_python.py",
             "dsl_tutorials/tvm_ffi/aot_export.py", "dsl_tutorials/tvm_ffi/aot_use_in_jax.py",
             "dsl_tutorials/tvm_ffi/aot_use_in_torch.py", "dsl_tutorials/tvm_ffi/error_reporting.py"]
    assert survey.chains(names) == [names[:2], names[2:5], names[5:]]
    assert survey.chains(names[1:2]) == [names[1:2]]  # alone (--only), it runs by itself


def test_only_modules_with_a_main_block_are_programs(survey):
    assert survey.has_main('import x\n\nif __name__ == "__main__":\n    x.run()\n')
    assert survey.has_main("if __name__=='__main__':\n    pass\n")
    # a helper that names __main__ in a comment or string, or guards only inside a function, is not a program
    assert not survey.has_main("# imported by fmha.py, not run as __main__\nX = 1\n")
    assert not survey.has_main("def f():\n    if __name__ == '__main__':\n        pass\n")


def test_a_blackwell_program_runs_for_sm100_with_its_small_arguments(survey):
    how = survey.blackwell_how("cute/blackwell/kernel/dense_gemm/dense_gemm.py")
    assert how == {"args": ["--mnkl", "128,128,128,1"], "arch": "sm_100a", "ranks": 0}
    how["args"].append("--x")  # a copy: the table stays as it is
    assert survey.blackwell_how("cute/blackwell/kernel/dense_gemm/dense_gemm.py")["args"] == ["--mnkl", "128,128,128,1"]
    assert survey.blackwell_how("cute/blackwell/kernel/distributed/all_reduce_simple.py")["ranks"] == 2
    with pytest.raises(KeyError, match="new_kernel.py has no entry in BLACKWELL_ARGS"):
        survey.blackwell_how("cute/blackwell/kernel/new_kernel.py")


def test_every_blackwell_program_has_arguments_and_every_entry_is_a_program(survey):
    if not os.path.isdir(survey.MIRROR):
        pytest.skip("no CUTLASS mirror")
    names = survey.blackwell_programs(survey.MIRROR, "HEAD")
    subs = {n[len(survey.BLACKWELL) + 1:] for n in names}
    assert subs == set(survey.BLACKWELL_ARGS)
    assert not any(n.endswith(("_helpers.py", "utils.py", "_reference.py")) for n in subs)


def test_the_arch_and_arguments_reach_the_program(survey, tmp_path, src_on_path, monkeypatch):
    monkeypatch.setenv("CUTE_DSL_ARCH", "sm_90a")  # the survey's own setting wins
    (tmp_path / "show.py").write_text("import os, sys\nassert os.environ.get('CUTE_DSL_ARCH') == 'sm_100a'\n"
                                      "assert sys.argv[1:] == ['--mnk', '1,2,3'], sys.argv\n")
    r = survey.run_one(str(tmp_path), "show.py", timeout=120, args=["--mnk", "1,2,3"], arch="sm_100a")
    assert r["result"] == "PASS", r
    r = survey.run_one(str(tmp_path), "show.py", timeout=120, args=["--mnk", "1,2,3"])
    assert r["result"] == "FAIL" and "AssertionError" in r["why"], r


def test_ranks_run_under_torchrun_with_a_cutelab_command(survey, tmp_path):
    prog = str(tmp_path / "ar.py")
    cmd = survey.command(prog, ["--M", "32"], ranks=2)
    assert cmd[1:5] == ["-m", "torch.distributed.run", "--nproc-per-node", "2"]
    exe = cmd[cmd.index("--no-python") + 1]
    assert cmd[cmd.index("--no-python") + 2:] == ["run", prog, "--M", "32"]
    assert os.access(exe, os.X_OK) and "-m cutelab" in open(exe).read()
    assert survey.command(prog, ["--M", "32"]) == [survey.sys.executable, "-m", "cutelab", "run", prog, "--M", "32"]


def test_the_reason_names_the_program_without_the_export_folder(survey, tmp_path, src_on_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bad.py").write_text("raise RuntimeError('at ' + __file__ + ':1')\n")
    r = survey.run_one(str(tmp_path), "sub/bad.py", timeout=120)
    assert r["result"] == "FAIL" and r["why"] == "RuntimeError: at sub/bad.py:1", r


def test_the_reason_under_torchrun_is_the_ranks_error_not_the_launchers_summary(survey, tmp_path, src_on_path):
    # torchrun's ranks write "[rankN]: ..." lines, then the launcher its own traceback and a "=====" summary
    (tmp_path / "ranks.py").write_text(
        "import sys\nsys.stderr.write('[rank1]: Traceback (most recent call last):\\n'\n"
        "                 '[rank1]: ValueError: multicast is off\\n'\n"
        "                 'E1128 api.py:1002] failed (exitcode: 1) local_rank: 0\\n'\n"
        "                 'torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \\n'\n"
        "                 '============================================================\\n')\nsys.exit(1)\n")
    r = survey.run_one(str(tmp_path), "ranks.py", timeout=120)
    assert r["result"] == "FAIL" and r["why"] == "rank 1: ValueError: multicast is off", r


def test_ranks_that_exit_without_a_traceback_give_their_last_line(survey, tmp_path, src_on_path):
    (tmp_path / "ranks.py").write_text(
        "import sys\nsys.stderr.write('UserWarning: has_multicast_support is False: switched off\\n'\n"
        "                 'W1128 16:00:12.838000 30249 api.py:1028] Sending process 30262 closing signal SIGTERM\\n'\n"
        "                 'E1128 api.py:1002] failed (exitcode: 255) local_rank: 0\\n'\n"
        "                 '============================================================\\n')\nsys.exit(1)\n")
    r = survey.run_one(str(tmp_path), "ranks.py", timeout=120)
    assert r["result"] == "FAIL" and r["why"] == "UserWarning: has_multicast_support is False: switched off", r
