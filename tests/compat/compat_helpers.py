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
