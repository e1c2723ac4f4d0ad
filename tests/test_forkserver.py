"""tests/forkserver.py: a served `python -m cutelab run` behaves as the subprocess it stands for."""

import os
import subprocess
import sys

import pytest

import forkserver

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

PROG = """
import os, sys
print("argv", sys.argv[1:])
print("cwd", os.getcwd())
print("env", os.environ.get("FORKSERVER_PROBE"))
print("to stderr", file=sys.stderr)
if "--sleep" in sys.argv:
    import time
    time.sleep(60)
sys.exit(int(sys.argv[1]))
"""


def _env(**kw):
    return dict(os.environ, PYTHONPATH=SRC, **kw)


def test_a_served_run_has_the_callers_argv_env_cwd_output_and_exit_code(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(PROG)
    sub = tmp_path / "sub"
    sub.mkdir()
    p = forkserver.run([sys.executable, "-m", "cutelab", "run", str(prog), "3", "x y"], cwd=str(sub),
                       env=_env(FORKSERVER_PROBE="hello"), capture_output=True, text=True, timeout=120)
    assert p.returncode == 3
    assert "argv ['3', 'x y']" in p.stdout and f"cwd {sub}" in p.stdout and "env hello" in p.stdout, p.stdout
    assert "to stderr" in p.stderr
    assert any(forkserver._servers), "the run was not served"
    p = forkserver.run([sys.executable, "-m", "cutelab", "run", str(prog), "0"], cwd=str(tmp_path), env=_env(),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "env None" in p.stdout, p.stdout
    with pytest.raises(subprocess.CalledProcessError):
        forkserver.run([sys.executable, "-m", "cutelab", "run", str(prog), "5"], cwd=str(tmp_path), env=_env(),
                       capture_output=True, timeout=120, check=True)


def test_a_served_run_past_its_timeout_is_killed(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(PROG)
    with pytest.raises(subprocess.TimeoutExpired):
        forkserver.run([sys.executable, "-m", "cutelab", "run", str(prog), "0", "--sleep"], cwd=str(tmp_path),
                       env=_env(), capture_output=True, text=True, timeout=3)


def test_other_commands_are_not_served():
    assert not forkserver._served([sys.executable, "-c", "pass"], {"capture_output": True})
    assert not forkserver._served([sys.executable, "-m", "cutelab", "run", "p.py"], {})  # output not captured
    assert not forkserver._served([sys.executable, "-m", "cutelab", "run", "p.py"],
                                  {"capture_output": True, "input": "x"})
    assert forkserver._served([sys.executable, "-m", "cutelab", "run", "p.py"], {"capture_output": True, "text": True})
