"""Running code through `cutelab run` (or plain python) in a subprocess, with this checkout's cutelab."""
import os
import subprocess
import sys
import textwrap

import cutelab

SRC = os.path.dirname(os.path.dirname(os.path.abspath(cutelab.__file__)))


def run(tmp_path, source, *args, cutelab_run=True, extra_path=(), env=None, timeout=300, module=None):
    """Write source to tmp_path/prog.py and run it; returns the CompletedProcess (text)."""
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent(source))
    e = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, *map(str, extra_path)]), PYTHONHASHSEED="0")
    e.pop("CUTE_DSL_ARCH", None)
    e.update(env or {})
    if module is not None:
        cmd = [sys.executable, "-m", "cutelab", "run", "-m", module, *args]
    elif cutelab_run:
        cmd = [sys.executable, "-m", "cutelab", "run", str(prog), *args]
    else:
        cmd = [sys.executable, str(prog), *args]
    return subprocess.run(cmd, cwd=str(tmp_path), env=e, capture_output=True, text=True, timeout=timeout)


def ok(proc):
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    return proc.stdout


PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")

# run a program as `cutelab run` does, then write the last launch's CUDA to a file
_DRIVER = """
import sys
from cutelab.compat.run import main
out = sys.argv[1]
rc = main(sys.argv[2:])
from cutelab.kernel import last_launch
from cutelab.kernel.cuda import printer
open(out, "w").write(printer.render(last_launch().ir))
sys.exit(rc)
"""


def run_program(tmp_path, name, *args, timeout=600):
    """Run tests/compat/programs/NAME with ARGS through `cutelab run` (CPU interpreter); assert it exits 0
    and its output ends in PASS; return (stdout, the CUDA of its last kernel launch)."""
    env = dict(os.environ, PYTHONPATH=SRC, PYTHONHASHSEED="0")
    env.pop("CUTE_DSL_ARCH", None)
    cu = tmp_path / "kernel.cu"
    p = subprocess.run([sys.executable, "-c", _DRIVER, str(cu), os.path.join(PROGRAMS, name), *args],
                       cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-4000:]}"
    assert p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]
    return p.stdout, cu.read_text()


def sha256_of(name):
    import hashlib

    with open(os.path.join(PROGRAMS, name), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()
